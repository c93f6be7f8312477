// One scripted reply in a protocol-neutral form: what the model says (text or
// tool calls), why it stopped and what it cost in o200k_base tokens. The chat
// and Anthropic renderers (./chat.ts, ./anthropic.ts) only reshape it, so the
// same request costs the same tokens and gets the same words on either protocol.
import { countCompletionTokensAsync, countPromptTokensAsync, truncateToTokensAsync, type WireMessage } from '../../node/tokens.js';
import type { ScriptedReply } from './scenarios.js';

/** A tool call as chat completions carries it: the arguments are JSON text (possibly broken on purpose). */
export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type FinishReason = 'stop' | 'tool_calls' | 'length';

export interface Answer {
  model: string;
  /** How many messages the request carried: part of the reply's id, so a repeated request gets the same one. */
  requestMessages: number;
  /** Epoch seconds. */
  created: number;
  content: string | null;
  toolCalls?: WireToolCall[];
  finish: FinishReason;
  /** cacheRead and cacheWrite are parts of prompt, present only when the script reports a cache. */
  usage: { prompt: number; completion: number; cacheRead?: number; cacheWrite?: number };
}

/**
 * The reply to one request, with its usage. Like a real API it honours
 * max_tokens: a reply longer than that is cut (its text, or the start of its
 * tool calls' JSON as text) and finishes with "length"; only an `overbill`
 * script reports more. Counted in time slices, so one request with a long
 * unbroken string does not stall every other request the provider is serving.
 */
export async function answerOf(model: string, script: ScriptedReply, messages: WireMessage[], tools: unknown[] | undefined, maxTokens: number | null): Promise<Answer> {
  let toolCalls: WireToolCall[] | undefined =
    script.type === 'calls'
      ? script.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }))
      : script.type === 'raw_calls'
        ? script.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }))
        : undefined;
  let content = script.type === 'answer' ? script.content : (script.content ?? null);
  const prompt = await countPromptTokensAsync(messages, tools);
  let out = await countCompletionTokensAsync(content, toolCalls);
  let cut = false;
  if (maxTokens !== null && out > maxTokens) {
    content = await truncateToTokensAsync(content ?? JSON.stringify(toolCalls), maxTokens);
    toolCalls = undefined;
    out = Math.min(maxTokens, await countCompletionTokensAsync(content, undefined));
    cut = true;
  }
  if (script.overbill) out = Math.max(out, maxTokens ?? out) + 1000;
  return {
    model,
    requestMessages: messages.length,
    created: Math.floor(Date.now() / 1000),
    content,
    ...(toolCalls ? { toolCalls } : {}),
    finish: cut ? 'length' : toolCalls ? 'tool_calls' : 'stop',
    usage: { prompt, completion: out, ...cacheOf(script, prompt) },
  };
}

function cacheOf(script: ScriptedReply, prompt: number): { cacheRead?: number; cacheWrite?: number } {
  if (!script.cache) return {};
  const cacheRead = Math.min(prompt, script.cache.read);
  return { cacheRead, cacheWrite: Math.min(prompt - cacheRead, script.cache.write) };
}

/**
 * Cuts a text into at most `maxPieces` pieces at word boundaries (whitespace
 * stays with the word before it), so a stream's deltas concatenate to the
 * text exactly. Bounded, so a long reply is not thousands of parts.
 */
export function streamPieces(text: string, maxPieces = 24): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  if (words.length <= maxPieces) return words;
  const per = Math.ceil(words.length / maxPieces);
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += per) pieces.push(words.slice(i, i + per).join(''));
  return pieces;
}

/** JSON text in a few pieces (not at word boundaries: a model streams arguments however its tokens fall). */
export function jsonPieces(json: string, maxPieces = 3): string[] {
  if (!json) return [];
  const size = Math.ceil(json.length / maxPieces);
  const pieces: string[] = [];
  for (let i = 0; i < json.length; i += size) pieces.push(json.slice(i, i + size));
  return pieces;
}

/** One server-sent event: Anthropic names each event, chat completions sends bare `data:` lines. */
export function sseFrame(data: string, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
}
