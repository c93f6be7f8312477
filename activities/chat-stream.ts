// The built-in client's streamed reply: chat completions' server-sent events
// (`stream: true`, `stream_options.include_usage`) read as they arrive, each
// text delta handed to the token sink, folded into the body an unstreamed
// call would have got, so one conversion (./model.ts toReply) serves both.
// Used only when the worker has a token sink: without one, a reply read
// whole costs less. A stream that breaks off, carries a part that is not JSON
// or ends without its finish is a failed attempt, never a half reply.
import { ApplicationFailure } from '@temporalio/common';
import { PROVIDER_UNAVAILABLE } from '../common/provider-errors.js';
import type { TokenStream } from '../common/token-sink.js';

/** Chat completions' usage, as a provider may send it (every field checked where it is read). */
export interface WireUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
}

/** What the unstreamed body carries, as ./model.ts reads it. */
export interface ChatBody {
  choices: { message: { content: string | null; tool_calls?: unknown[] }; finish_reason: string }[];
  usage?: WireUsage;
}

interface Chunk {
  choices?: { delta?: { content?: unknown; tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[] }; finish_reason?: unknown }[];
  usage?: WireUsage | null;
  error?: { message?: unknown };
}

const malformed = (message: string) => ApplicationFailure.create({ type: 'ProviderMalformedReply', message });

/** Reads the event stream to its `[DONE]`; `signal` aborted: the read's own error is thrown, for the caller to tell a Stop. */
export async function readChatStream(res: Response, tokens: TokenStream, signal: AbortSignal): Promise<ChatBody> {
  if (!res.body) throw malformed('the model provider answered a streamed request with no body');
  let content = '';
  let sawText = false;
  const calls: { id: string; name: string; arguments: string }[] = [];
  let finish: string | null = null;
  let usage: WireUsage | undefined;
  let done = false;
  let parts = 0;
  let buffer = '';
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const take = (data: string) => {
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      throw malformed(`the model provider's stream carried a part that is not JSON after ${parts} parts: ${data.slice(0, 200)}`);
    }
    parts += 1;
    if (chunk.error) throw malformed(`the model provider's stream carried an error after ${parts - 1} parts: ${typeof chunk.error.message === 'string' ? chunk.error.message : JSON.stringify(chunk.error)}`);
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta;
    if (typeof delta?.content === 'string' && delta.content !== '') {
      content += delta.content;
      sawText = true;
      tokens.text(delta.content);
    }
    for (const t of delta?.tool_calls ?? []) {
      const i = typeof t.index === 'number' ? t.index : calls.length;
      calls[i] ??= { id: '', name: '', arguments: '' };
      if (typeof t.id === 'string') calls[i].id = t.id;
      if (typeof t.function?.name === 'string') calls[i].name += t.function.name;
      if (typeof t.function?.arguments === 'string') calls[i].arguments += t.function.arguments;
    }
    if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
  };
  try {
    while (!done) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffer += value;
      // Events end at a blank line; a data field may come in several reads.
      let end: number;
      while (!done && (end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        const data = event
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data) take(data);
      }
    }
  } catch (err) {
    if (signal.aborted || err instanceof ApplicationFailure) throw err;
    throw ApplicationFailure.create({ type: PROVIDER_UNAVAILABLE, message: `the model provider's stream broke off after ${parts} parts: ${err instanceof Error ? err.message : String(err)}` });
  } finally {
    // Done or failed, the connection is let go (an early [DONE] leaves nothing worth reading).
    await reader.cancel().catch(() => undefined);
  }
  if (!done || finish === null) throw malformed(`the model provider's stream ended after ${parts} parts without its ${finish === null ? 'finish_reason' : '[DONE]'} (cut short)`);
  const toolCalls = calls.filter(Boolean).map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return {
    choices: [{ message: { content: sawText ? content : null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) }, finish_reason: finish }],
    ...(usage !== undefined ? { usage } : {}),
  };
}
