// Token counts with a real byte-pair encoder (o200k_base): the scripted
// provider reports them, and the model activity falls back on them when a
// provider's reply carries no usage, so money stays arithmetic over counts.
import { Tiktoken } from 'js-tiktoken/lite';
import o200k_base from 'js-tiktoken/ranks/o200k_base';

const encoder = new Tiktoken(o200k_base);

export function countTokens(text: string): number {
  return text ? encoder.encode(text).length : 0;
}

export interface WireMessage {
  role: string;
  content?: string | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: unknown[];
}

// Per-message framing overhead, as OpenAI documents for its chat formats.
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

/** Prompt tokens: every message (role, content, calls, ids) and the tool definitions. */
export function countPromptTokens(messages: WireMessage[], tools: unknown[] | undefined): number {
  let n = REPLY_PRIMING;
  for (const m of messages) {
    n += PER_MESSAGE + countTokens(m.role) + countTokens(m.content ?? '');
    if (m.name) n += countTokens(m.name) + 1;
    if (m.tool_call_id) n += countTokens(m.tool_call_id);
    if (m.tool_calls?.length) n += countTokens(JSON.stringify(m.tool_calls));
  }
  if (tools?.length) n += countTokens(JSON.stringify(tools));
  return n;
}

/** Completion tokens: the reply's text and its tool calls. */
export function countCompletionTokens(content: string | null, toolCalls: unknown[] | undefined): number {
  return countTokens(content ?? '') + (toolCalls?.length ? countTokens(JSON.stringify(toolCalls)) : 0);
}

/** The first `max` tokens of a text: what a model cut at max_tokens writes. */
export function truncateToTokens(text: string, max: number): string {
  const tokens = encoder.encode(text);
  return tokens.length <= max ? text : encoder.decode(tokens.slice(0, max));
}
