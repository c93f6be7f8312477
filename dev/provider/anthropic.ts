// Anthropic's Messages API on the scripted provider (POST /v1/messages). The
// request is converted to its chat-completions equivalent (system prompt
// first, each tool_result block a `tool` message, each tool_use block a
// tool call with its arguments as JSON text), so the scenarios, the protocol
// check and the token counts are the chat path's; the reply is rendered in
// Anthropic's shape: content blocks, stop_reason, usage with the cache
// fields, and its named server-sent events when `stream: true`.
import type { WireMessage } from '../../node/tokens.js';
import { isPositiveInteger } from './chat.js';
import { jsonPieces, sseFrame, streamPieces, type Answer, type FinishReason } from './replies.js';
import { optionsOf, requestBodyOf, scriptInputOf, type ScriptedRequest } from './requests.js';
import type { ScriptInput } from './scenarios.js';

interface AnthropicBody {
  model?: unknown;
  system?: unknown;
  messages?: unknown;
  tools?: unknown;
  max_tokens?: unknown;
  stream?: unknown;
}

interface Block {
  type?: unknown;
  text?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
}

/** The request in the server's common shape, or the message of the 400 it gets. */
export function parseAnthropicRequest(raw: unknown): ScriptedRequest | string {
  const body = (typeof raw === 'object' && raw !== null ? raw : {}) as AnthropicBody;
  if (!Array.isArray(body.messages)) return 'messages: Field required (an array)';
  // Anthropic requires max_tokens on every request, unlike chat completions.
  if (!isPositiveInteger(body.max_tokens)) return `max_tokens: Field required (a positive integer), got ${JSON.stringify(body.max_tokens)}`;
  const messages: WireMessage[] = [];
  const system = textOf(body.system);
  if (system) messages.push({ role: 'system', content: system });
  for (const [i, m] of (body.messages as unknown[]).entries()) {
    const msg = (typeof m === 'object' && m !== null ? m : {}) as { role?: unknown; content?: unknown };
    if (msg.role === 'user') messages.push(...userMessages(msg.content));
    else if (msg.role === 'assistant') messages.push(assistantMessage(msg.content));
    else return `messages.${i}.role: Input should be 'user' or 'assistant', got ${JSON.stringify(msg.role)}`;
  }
  return {
    protocol: 'anthropic',
    model: typeof body.model === 'string' ? body.model : '',
    messages,
    tools: Array.isArray(body.tools) ? body.tools.map(chatTool) : undefined,
    maxTokens: body.max_tokens,
    stream: body.stream === true,
    includeUsage: true,
    options: optionsOf(body, ['model', 'system', 'messages', 'tools', 'stream']),
  };
}

/**
 * A scenario's inputs from an Anthropic request: turn = assistant messages
 * (plus turns a context note says were folded away), toolText = the
 * tool_result texts, toolNames from `tools`, task = the first user text.
 * Null for a request the provider refuses.
 */
export function anthropicScriptInput(raw: unknown): ScriptInput | null {
  const req = parseAnthropicRequest(raw);
  return typeof req === 'string' ? null : scriptInputOf(requestBodyOf(req, raw));
}

/** A user message's blocks in order: each tool_result its own tool message, each text a user message. */
function userMessages(content: unknown): WireMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: WireMessage[] = [];
  for (const b of blocks(content)) {
    if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: String(b.tool_use_id), content: textOf(b.content) });
    else if (b.type === 'text') out.push({ role: 'user', content: String(b.text ?? '') });
    // Images and documents: the scripted models do not look at them.
  }
  return out;
}

function assistantMessage(content: unknown): WireMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const parts = blocks(content);
  const text = parts.filter((b) => b.type === 'text').map((b) => String(b.text ?? ''));
  const calls = parts
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: String(b.id), type: 'function', function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) } }));
  return { role: 'assistant', content: text.length ? text.join('') : null, ...(calls.length ? { tool_calls: calls } : {}) };
}

function chatTool(t: unknown) {
  const tool = (typeof t === 'object' && t !== null ? t : {}) as { name?: unknown; description?: unknown; input_schema?: unknown };
  return { type: 'function', function: { name: String(tool.name ?? ''), description: tool.description, parameters: tool.input_schema } };
}

/** A system prompt or tool_result content: a string, or text blocks joined. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  return blocks(v)
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text ?? ''))
    .join('\n');
}

const blocks = (v: unknown): Block[] => (Array.isArray(v) ? v.filter((b): b is Block => typeof b === 'object' && b !== null) : []);

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** An error in Anthropic's shape, its type from the status as Anthropic documents them. */
export function anthropicError(status: number, message: string) {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
}

const STOP_REASONS: Record<FinishReason, string> = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens' };

/**
 * The scripted provider has no prompt cache: both cache fields are 0, present
 * as Anthropic sends them, unless the script reports one. Anthropic's
 * input_tokens are the uncached ones only.
 */
function usageOf(a: Answer, output: number) {
  const read = a.usage.cacheRead ?? 0;
  const write = a.usage.cacheWrite ?? 0;
  return { input_tokens: a.usage.prompt - read - write, output_tokens: output, cache_creation_input_tokens: write, cache_read_input_tokens: read };
}

/**
 * A tool_use block's input: the arguments' object. Anthropic always sends an
 * object; arguments a script broke on purpose (raw_calls) are sent as the
 * raw string, so a client sees input that is not an object, as close to
 * "the model wrote bad JSON" as this protocol can say.
 */
function inputOf(args: string): unknown {
  try {
    const v: unknown = JSON.parse(args);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : args;
  } catch {
    return args;
  }
}

const messageId = (a: Answer) => `msg_${a.model}_${a.requestMessages}`;

export function anthropicBody(a: Answer, opts: { usage: boolean }) {
  const content: object[] = [];
  if (a.content) content.push({ type: 'text', text: a.content });
  for (const c of a.toolCalls ?? []) content.push({ type: 'tool_use', id: c.id, name: c.function.name, input: inputOf(c.function.arguments) });
  return {
    id: messageId(a),
    type: 'message',
    role: 'assistant',
    model: a.model,
    content,
    stop_reason: STOP_REASONS[a.finish],
    stop_sequence: null,
    ...(opts.usage ? { usage: usageOf(a, a.usage.completion) } : {}),
  };
}

/**
 * The reply as Anthropic streams it: message_start (the input tokens), a
 * ping, each content block as content_block_start, its deltas (text_delta in
 * word-sized pieces, input_json_delta in a few) and content_block_stop, then
 * message_delta (stop_reason and the output tokens) and message_stop.
 */
export function anthropicStreamFrames(a: Answer, opts: { usage: boolean }): string[] {
  const ev = (type: string, data: object) => sseFrame(JSON.stringify({ type, ...data }), type);
  const frames = [
    ev('message_start', {
      message: { id: messageId(a), type: 'message', role: 'assistant', model: a.model, content: [], stop_reason: null, stop_sequence: null, ...(opts.usage ? { usage: usageOf(a, 0) } : {}) },
    }),
    ev('ping', {}),
  ];
  let index = 0;
  if (a.content) {
    frames.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const text of streamPieces(a.content)) frames.push(ev('content_block_delta', { index, delta: { type: 'text_delta', text } }));
    frames.push(ev('content_block_stop', { index }));
    index += 1;
  }
  for (const c of a.toolCalls ?? []) {
    frames.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.function.name, input: {} } }));
    const input = inputOf(c.function.arguments);
    for (const partial_json of jsonPieces(typeof input === 'string' ? input : JSON.stringify(input))) {
      frames.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }));
    }
    frames.push(ev('content_block_stop', { index }));
    index += 1;
  }
  frames.push(ev('message_delta', { delta: { stop_reason: STOP_REASONS[a.finish], stop_sequence: null }, ...(opts.usage ? { usage: { output_tokens: a.usage.completion } } : {}) }));
  frames.push(ev('message_stop', {}));
  return frames;
}

/** A stream part whose data is not JSON: what a malformed-stream fault sends in place of a real one. */
export const BROKEN_ANTHROPIC_FRAME = sseFrame('{"type": "content_block_delta", "index": 0, "delta": {"type": "text_del', 'content_block_delta');
