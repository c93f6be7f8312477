// The built-in provider: OpenAI chat completions over fetch, behind the same
// seam as every AI SDK provider (a LanguageModelV3), so the model activity has
// one path, one error table (./ai-sdk-model.ts failureOf) and one fold of a
// stream (../activities/ai-sdk-stream.ts). It stays beside @ai-sdk/openai-compatible
// only because it measures faster per call (bench/model-path.ts,
// reports/model-path.md): it validates nothing it does not read.
//
// What it does, as the packages do: HTTP failures are APICallErrors carrying
// their status and headers; a failure to connect is one without a status; a
// stream part that is not JSON, or that carries an error, is an `error`
// part; a stream that ends without its finish_reason or its [DONE] ends
// without a `finish` part (cut short). A server that ignores `stream: true`
// and answers whole is read as one part. Tool arguments a server sends as an
// object (not the JSON text the protocol says) are encoded here, iteratively
// past what JSON.stringify can nest, so the workflow refuses them for their
// depth instead of the call failing as an outage.
import { APICallError, type LanguageModelV3, type LanguageModelV3CallOptions, type LanguageModelV3FinishReason, type LanguageModelV3FunctionTool, type LanguageModelV3GenerateResult, type LanguageModelV3StreamPart, type LanguageModelV3Usage } from '@ai-sdk/provider';
import { fromPrompt } from './ai-sdk-prompt.js';
import { foldPart, emptyFold } from './ai-sdk-stream.js';
import { canonicalJson } from '../common/args-hash.js';

/** Where the built-in provider sends its requests. */
export interface ChatCompletionsSettings {
  /** The OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8787/v1` (`/chat/completions` is added). */
  baseURL: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
}

/** Chat completions' usage, as a server may send it (every field checked where it is read). */
interface WireUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
}

interface WireToolCall {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/** A streamed chunk or a whole body: `delta` in the one, `message` in the other. */
interface WireChunk {
  choices?: { delta?: { content?: unknown; tool_calls?: WireToolCall[] }; message?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown }[];
  usage?: WireUsage | null;
  error?: { message?: unknown };
}

/** The built-in provider: a model by its id, as `createOpenAICompatible(...)` gives one. */
export function createChatCompletions(settings: ChatCompletionsSettings): (modelId: string) => LanguageModelV3 {
  const url = `${settings.baseURL.replace(/\/+$/, '')}/chat/completions`;
  return (modelId) => {
    const doStream = (options: LanguageModelV3CallOptions) => streamOf(url, settings.apiKey, modelId, options, true);
    return {
      specificationVersion: 'v3',
      provider: 'chat-completions',
      modelId,
      supportedUrls: {},
      doStream,
      // Asked unstreamed (`stream: false`): the whole body is read as one part, as a server that ignored `stream: true` is.
      doGenerate: async (options) => generated(await streamOf(url, settings.apiKey, modelId, options, false)),
    };
  };
}

async function streamOf(url: string, apiKey: string | undefined, modelId: string, options: LanguageModelV3CallOptions, streamed: boolean): Promise<{ stream: ReadableStream<LanguageModelV3StreamPart> }> {
  const body = {
    // providerOptions.openaiCompatible first: every field the harness sets below wins over it
    // (a run cannot lift a hard budget's max_tokens, or name another model, through it).
    ...extraBody(options.providerOptions),
    model: modelId,
    messages: fromPrompt(options.prompt),
    ...(options.tools?.length ? { tools: options.tools.flatMap((t) => (t.type === 'function' ? [toOpenAiTool(t)] : [])) } : {}),
    // The run's maxOutputTokens, or a hard budget's hold: the lower of the two (./ai-sdk-model.ts settingsOptions).
    ...(options.maxOutputTokens !== undefined ? { max_tokens: options.maxOutputTokens } : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.topP !== undefined ? { top_p: options.topP } : {}),
    ...(options.stopSequences !== undefined ? { stop: options.stopSequences } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.toolChoice !== undefined && options.toolChoice.type !== 'tool' ? { tool_choice: options.toolChoice.type } : {}),
    // OpenAI's native structured output. Not strict: strict mode refuses most schemas people write (every property required, no open objects).
    ...(options.responseFormat?.type === 'json' && options.responseFormat.schema
      ? { response_format: { type: 'json_schema', json_schema: { name: options.responseFormat.name ?? 'output', schema: options.responseFormat.schema, strict: false } } }
      : {}),
    ...(streamed ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: options.abortSignal,
    });
  } catch (err) {
    if (options.abortSignal?.aborted) throw err;
    // No status: the one table reads it as unreachable.
    throw new APICallError({ message: err instanceof Error ? err.message : String(err), url, requestBodyValues: body, cause: err, isRetryable: true });
  }
  if (!res.ok) {
    const text = await res.text();
    throw new APICallError({ message: errorDetail(text), url, requestBodyValues: body, statusCode: res.status, responseHeaders: Object.fromEntries(res.headers), responseBody: text });
  }
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream') || !res.body) {
    // A server that ignored `stream: true` answered whole: one part, read as a chunk is.
    return { stream: streamOfParts(wholeParts(await res.text(), res.status)) };
  }
  return { stream: eventParts(res.body) };
}

/** The key of providerOptions whose fields the built-in provider adds to its request body (the one @ai-sdk/openai-compatible reads too). */
export const CHAT_COMPLETIONS_OPTIONS_KEY = 'openaiCompatible';

/** providerOptions.openaiCompatible's fields, as extra request fields (`{"reasoning_effort": "low"}`); none when absent. */
function extraBody(providerOptions: LanguageModelV3CallOptions['providerOptions']): Record<string, unknown> {
  const own = providerOptions?.[CHAT_COMPLETIONS_OPTIONS_KEY];
  return own && typeof own === 'object' && !Array.isArray(own) ? { ...own } : {};
}

/** An error body's message, or its first 500 characters when it has none. */
function errorDetail(text: string): string {
  try {
    const msg = (JSON.parse(text) as WireChunk).error?.message;
    if (typeof msg === 'string') return msg;
  } catch {
    // not JSON: keep the raw text
  }
  return text.slice(0, 500);
}

function toOpenAiTool(t: LanguageModelV3FunctionTool) {
  return { type: 'function' as const, function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.inputSchema } };
}

/** The parts of one reply, folded from its chunks as they come. */
class Reply {
  private text = false;
  private readonly calls: { id: string; name: string; arguments: string }[] = [];
  private finish: string | null = null;
  private usage: WireUsage | null = null;
  parts = 0;

  /** One chunk's parts; an `error` part for a chunk that says it failed. */
  take(chunk: WireChunk, out: (p: LanguageModelV3StreamPart) => void): void {
    this.parts += 1;
    if (chunk.error) {
      out({ type: 'error', error: new Error(`the stream carried an error: ${typeof chunk.error.message === 'string' ? chunk.error.message : JSON.stringify(chunk.error)}`) });
      return;
    }
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const piece = choice.delta ?? choice.message;
    if (typeof piece?.content === 'string' && piece.content !== '') {
      if (!this.text) out({ type: 'text-start', id: 'text' });
      this.text = true;
      out({ type: 'text-delta', id: 'text', delta: piece.content });
    }
    const calls: unknown = piece?.tool_calls;
    for (const raw of Array.isArray(calls) ? (calls as WireToolCall[]) : []) {
      const i = typeof raw.index === 'number' ? raw.index : this.calls.length;
      const c = (this.calls[i] ??= { id: '', name: '', arguments: '' });
      if (typeof raw.id === 'string') c.id = raw.id;
      if (typeof raw.function?.name === 'string') c.name += raw.function.name;
      const args = raw.function?.arguments;
      if (typeof args === 'string') c.arguments += args;
      else if (args !== undefined) c.arguments = encodeArguments(args);
    }
    if (typeof choice.finish_reason === 'string') this.finish = choice.finish_reason;
  }

  /** The closing parts: the tool calls, whole, then the finish; none when the reply never said how it finished (cut short). */
  end(out: (p: LanguageModelV3StreamPart) => void): void {
    if (this.finish === null) return;
    if (this.text) out({ type: 'text-end', id: 'text' });
    for (const c of this.calls.filter(Boolean)) out({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.arguments });
    out({ type: 'finish', finishReason: finishOf(this.finish), usage: usageOf(this.usage) });
  }
}

function wholeParts(text: string, status: number): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  const out = (p: LanguageModelV3StreamPart) => void parts.push(p);
  let body: WireChunk;
  try {
    body = JSON.parse(text) as WireChunk;
  } catch {
    return [...parts, { type: 'error', error: new Error(`the model provider answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`) }];
  }
  if (!body.error && !body.choices?.[0]?.message) return [...parts, { type: 'error', error: new Error(`the reply has no choices[0].message: ${text.slice(0, 200)}`) }];
  const reply = new Reply();
  reply.take(body, out);
  reply.end(out);
  return parts;
}

function streamOfParts(parts: LanguageModelV3StreamPart[]): ReadableStream<LanguageModelV3StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(p);
      controller.close();
    },
  });
}

/**
 * Server-sent events as stream parts, read as they arrive. The first part
 * that is not JSON ends the stream with an error part (what follows it cannot
 * be trusted); a read that fails (a reset) fails the stream.
 */
function eventParts(body: ReadableStream<Uint8Array>): ReadableStream<LanguageModelV3StreamPart> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const reply = new Reply();
  let buffer = '';
  let over = false;
  return new ReadableStream<LanguageModelV3StreamPart>({
    start(controller) {
      controller.enqueue({ type: 'stream-start', warnings: [] });
    },
    // A pull that enqueues nothing is not called again: it reads until an event gives a part, or the body ends.
    async pull(controller) {
      let given = 0;
      const out = (p: LanguageModelV3StreamPart) => {
        given += 1;
        controller.enqueue(p);
      };
      const finish = async () => {
        over = true;
        controller.close();
        // Done or failed, the connection is let go (an early [DONE] leaves nothing worth reading).
        await reader.cancel().catch(() => undefined);
      };
      while (given === 0) {
        const { value, done } = await reader.read();
        if (done) return finish(); // no [DONE]: cut short, no finish part
        buffer += value;
        // Events end at a blank line; a data field may come in several reads.
        let end: number;
        while (!over && (end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
          const data = event
            .split(/\r?\n/)
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, ''))
            .join('\n');
          if (!data) continue;
          if (data === '[DONE]') {
            reply.end(out);
            return finish();
          }
          let chunk: WireChunk;
          try {
            chunk = JSON.parse(data) as WireChunk;
          } catch {
            out({ type: 'error', error: new Error(`the stream carried a part that is not JSON after ${reply.parts} parts: ${data.slice(0, 200)}`) });
            return finish();
          }
          reply.take(chunk, out);
        }
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

const FINISH: Record<string, LanguageModelV3FinishReason['unified']> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool-calls',
  content_filter: 'content-filter',
  error: 'error',
};

/** Chat completions' word as the unified reason; any other word travels as `other` with it (finishReasonOf gives it back). */
function finishOf(raw: string): LanguageModelV3FinishReason {
  return { unified: FINISH[raw] ?? 'other', raw };
}

function usageOf(u: WireUsage | null): LanguageModelV3Usage {
  const input = count(u?.prompt_tokens);
  const output = count(u?.completion_tokens);
  const cached = count(u?.prompt_tokens_details?.cached_tokens);
  const reasoning = count(u?.completion_tokens_details?.reasoning_tokens);
  return {
    inputTokens: { total: input, noCache: input !== undefined ? input - (cached ?? 0) : undefined, cacheRead: cached, cacheWrite: undefined },
    outputTokens: { total: output, text: output !== undefined ? output - (reasoning ?? 0) : undefined, reasoning },
  };
}

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/** A whole reply from the stream, as doGenerate gives it: what the stream's fold holds. */
async function generated({ stream }: { stream: ReadableStream<LanguageModelV3StreamPart> }): Promise<LanguageModelV3GenerateResult> {
  let fold = emptyFold();
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    fold = foldPart(fold, value);
  }
  if (fold.errors.length) throw fold.errors[0];
  if (!fold.finishReason || !fold.usage) throw new Error('the stream ended without its finish (cut short)');
  return { content: fold.content, finishReason: fold.finishReason, usage: fold.usage, warnings: [] };
}

/**
 * Arguments a server sent as an object, as the JSON text the transcript
 * keeps. Nested thousands deep, JSON.stringify overflows the stack: the
 * iterative canonical encoding takes over, and the workflow refuses the call
 * for its depth (a tool error the model reads). Past even that encoding's
 * bound, text that is not JSON, refused as such.
 */
function encodeArguments(args: unknown): string {
  try {
    return JSON.stringify(args);
  } catch {
    try {
      return canonicalJson(args);
    } catch {
      return '<arguments nested too deep to encode>';
    }
  }
}
