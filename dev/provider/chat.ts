// OpenAI chat completions on the scripted provider: the request as the
// server's common shape, the reply as one JSON body or as OpenAI's stream of
// `chat.completion.chunk` events ending with `data: [DONE]`.
import type { WireMessage } from '../../node/tokens.js';
import { jsonPieces, sseFrame, streamPieces, type Answer } from './replies.js';
import { optionsOf, type ScriptedRequest } from './requests.js';

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  tools?: unknown;
  max_tokens?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
}

/** The request, or the message of the 400 it gets. */
export function parseChatRequest(raw: unknown): ScriptedRequest | string {
  const body = (typeof raw === 'object' && raw !== null ? raw : {}) as ChatBody;
  if (!Array.isArray(body.messages)) return '`messages` must be an array';
  const maxTokens = body.max_tokens === undefined ? null : body.max_tokens;
  if (maxTokens !== null && !isPositiveInteger(maxTokens)) return `max_tokens must be a positive integer, got ${JSON.stringify(maxTokens)}`;
  return {
    protocol: 'chat',
    model: typeof body.model === 'string' ? body.model : '',
    messages: body.messages as WireMessage[],
    tools: Array.isArray(body.tools) ? (body.tools as unknown[]) : undefined,
    maxTokens,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    options: optionsOf(body, ['model', 'messages', 'tools', 'stream', 'stream_options']),
  };
}

export function chatError(message: string, type: string) {
  return { error: { message, type } };
}

export function chatBody(a: Answer) {
  return {
    id: chatId(a),
    object: 'chat.completion',
    created: a.created,
    model: a.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: a.content, ...(a.toolCalls ? { tool_calls: a.toolCalls } : {}) },
        finish_reason: a.finish,
      },
    ],
    usage: chatUsage(a),
  };
}

/** OpenAI's usage; the cache read (OpenAI reports no cache writes) only when the script reports a cache. */
function chatUsage(a: Answer) {
  return {
    prompt_tokens: a.usage.prompt,
    completion_tokens: a.usage.completion,
    total_tokens: a.usage.prompt + a.usage.completion,
    ...(a.usage.cacheRead !== undefined ? { prompt_tokens_details: { cached_tokens: a.usage.cacheRead } } : {}),
  };
}

/**
 * The reply as OpenAI streams it: a role chunk, the text in word-sized
 * deltas or each call's id and name then its arguments in pieces, a chunk
 * with the finish reason, the usage chunk (empty choices) when the request
 * asked for it with stream_options.include_usage, then `[DONE]`.
 */
export function chatStreamFrames(a: Answer, opts: { includeUsage: boolean; usage: boolean }): string[] {
  const head = { id: chatId(a), object: 'chat.completion.chunk', created: a.created, model: a.model };
  const chunk = (delta: object, finish: string | null = null) => sseFrame(JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] }));
  const frames = [chunk({ role: 'assistant', content: a.toolCalls ? null : '' })];
  for (const piece of streamPieces(a.content ?? '')) frames.push(chunk({ content: piece }));
  for (const [index, c] of (a.toolCalls ?? []).entries()) {
    frames.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }));
    for (const piece of jsonPieces(c.function.arguments)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  frames.push(chunk({}, a.finish));
  if (opts.includeUsage && opts.usage) {
    frames.push(sseFrame(JSON.stringify({ ...head, choices: [], usage: chatUsage(a) })));
  }
  frames.push(sseFrame('[DONE]'));
  return frames;
}

/** A stream part that is not JSON: what a malformed-stream fault sends in place of a real one. */
export const BROKEN_CHAT_FRAME = sseFrame('{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "trunc');

const chatId = (a: Answer) => `chatcmpl-${a.model}-${a.requestMessages}`;

export const isPositiveInteger = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;
