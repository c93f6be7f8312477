// Token counts with a real byte-pair encoder (o200k_base): the scripted
// provider reports them, and the model activity falls back on them when a
// provider's reply carries no usage, so money stays arithmetic over counts.
//
// The encoder is ./byte-pair.ts over js-tiktoken's o200k_base data: the same
// tokens as js-tiktoken's encoder, but linear-logarithmic in the length of a
// piece where js-tiktoken's is quadratic (8,000 `x` in a tool result took it
// ~12 s of a blocked event loop). The worker and the provider use the async
// variants, which give the event loop back every ~10 ms; the sync ones stay
// for code with nothing else to serve (tests, scripts).
import o200k_base from 'js-tiktoken/ranks/o200k_base';
import { BytePairEncoder, runInSlices, runSync, type Steps } from './byte-pair.js';

const encoder = new BytePairEncoder(o200k_base);

function* countSteps(text: string): Steps<number> {
  return text ? (yield* encoder.encodeSteps(text)).length : 0;
}

export function countTokens(text: string): number {
  return runSync(countSteps(text));
}

export function countTokensAsync(text: string): Promise<number> {
  return runInSlices(countSteps(text));
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

function* promptSteps(messages: WireMessage[], tools: unknown[] | undefined): Steps<number> {
  let n = REPLY_PRIMING;
  for (const m of messages) {
    n += PER_MESSAGE + (yield* countSteps(m.role)) + (yield* countSteps(m.content ?? ''));
    if (m.name) n += (yield* countSteps(m.name)) + 1;
    if (m.tool_call_id) n += yield* countSteps(m.tool_call_id);
    if (m.tool_calls?.length) n += yield* countSteps(JSON.stringify(m.tool_calls));
  }
  if (tools?.length) n += yield* countSteps(JSON.stringify(tools));
  return n;
}

/** Prompt tokens: every message (role, content, calls, ids) and the tool definitions. */
export function countPromptTokens(messages: WireMessage[], tools: unknown[] | undefined): number {
  return runSync(promptSteps(messages, tools));
}

/** countPromptTokens in time slices: never holds the event loop more than ~10 ms at a time. */
export function countPromptTokensAsync(messages: WireMessage[], tools: unknown[] | undefined): Promise<number> {
  return runInSlices(promptSteps(messages, tools));
}

function* completionSteps(content: string | null, toolCalls: unknown[] | undefined): Steps<number> {
  return (yield* countSteps(content ?? '')) + (toolCalls?.length ? yield* countSteps(JSON.stringify(toolCalls)) : 0);
}

/** Completion tokens: the reply's text and its tool calls. */
export function countCompletionTokens(content: string | null, toolCalls: unknown[] | undefined): number {
  return runSync(completionSteps(content, toolCalls));
}

/** countCompletionTokens in time slices. */
export function countCompletionTokensAsync(content: string | null, toolCalls: unknown[] | undefined): Promise<number> {
  return runInSlices(completionSteps(content, toolCalls));
}

function* truncateSteps(text: string, max: number): Steps<string> {
  // One token past max is enough to know the text is longer than max.
  const tokens = yield* encoder.encodeSteps(text, max + 1);
  return tokens.length <= max ? text : encoder.decode(tokens.slice(0, max));
}

/** The first `max` tokens of a text: what a model cut at max_tokens writes. */
export function truncateToTokens(text: string, max: number): string {
  return runSync(truncateSteps(text, max));
}

/** truncateToTokens in time slices. */
export function truncateToTokensAsync(text: string, max: number): Promise<string> {
  return runInSlices(truncateSteps(text, max));
}
