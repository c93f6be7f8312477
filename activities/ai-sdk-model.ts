// The model activity's one seam: a language model of the AI SDK's provider
// specification (V3: @ai-sdk/anthropic 3.x, @ai-sdk/openai-compatible 2.x;
// V4: @ai-sdk/anthropic 4.x, @ai-sdk/openai-compatible 3.x; or the built-in
// chat-completions provider, ./chat-completions.ts), called through doStream
// so the reply's text reaches the token sink as it arrives. Only activities
// and worker code import this: the workflow sandbox never sees a provider
// (lint enforces it). One classification of every provider's failures
// (failureOf, by ../common/provider-errors.ts's table): 429 waits out its
// retry-after, 5xx and network failures are retried, 400/401/403/404/422 are
// not; a stream that carries an error part or ends without its finish is a
// failed attempt, never a half reply that is charged and kept.
import {
  APICallError,
  NoSuchModelError,
  type LanguageModelV3,
  type LanguageModelV3Content,
  type LanguageModelV3CallOptions,
  type LanguageModelV3FunctionTool,
  type LanguageModelV3StreamPart,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4StreamPart,
  type ProviderV3,
  type ProviderV4,
  type JSONObject,
  type JSONSchema7,
} from '@ai-sdk/provider';
import type { ModelSettings } from '../common/model-settings.js';
import { ApplicationFailure } from '@temporalio/common';
import { PROVIDER_MALFORMED_REPLY, PROVIDER_RATE_LIMITED, PROVIDER_UNAVAILABLE, PROVIDER_UNKNOWN_MODEL, PROVIDER_UNREACHABLE, PROVIDER_VERDICTS } from '../common/provider-errors.js';
import { replyOf, toFunctionTools, toPrompt, type HarnessPrompt, type ProviderReply } from './ai-sdk-prompt.js';
import { emptyFold, foldPart } from './ai-sdk-stream.js';
import type { ChatMessage } from '../common/contract.js';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';
import type { TokenStream } from '../node/token-sink.js';

export { PROVIDER_MALFORMED_REPLY, PROVIDER_UNKNOWN_MODEL };

/** A language model of either provider specification the harness accepts: V3 (AI SDK 6) or V4 (AI SDK 7). */
export type LanguageModel = LanguageModelV3 | LanguageModelV4;

/** A model by its id: what `createAnthropic(...)` returns is one (and a ProviderV3 or ProviderV4 too). */
export type LanguageModelFactory = (modelId: string) => LanguageModel;

/** What a worker is given to reach its models: a factory, or a provider (V3 or V4) whose languageModel(id) is used. */
export type ModelProvider = LanguageModelFactory | ProviderV3 | ProviderV4;

/** What the activity asks of a model: options both specifications read alike (the checks below prove it at compile time). */
export interface HarnessCallOptions {
  prompt: HarnessPrompt;
  tools?: LanguageModelV3FunctionTool[];
  maxOutputTokens?: number;
  abortSignal?: AbortSignal;
  // The run's modelSettings (common/model-settings.ts), as given.
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  seed?: number;
  toolChoice?: { type: 'auto' | 'required' | 'none' };
  providerOptions?: Record<string, JSONObject>;
  /** The run's outputSchema: each provider package maps it to its own structured-output option. */
  responseFormat?: { type: 'json'; schema: JSONSchema7; name?: string };
}
// Compile-time proof that HarnessCallOptions is a V3 and a V4 call's options as they are.
const asV3 = (o: HarnessCallOptions): LanguageModelV3CallOptions => o;
const asV4 = (o: HarnessCallOptions): LanguageModelV4CallOptions => o;

/** What the activity calls: a V3 model, or a V4 one read as V3 (fromV4, the one place the two specifications meet). */
export interface StreamingModel {
  readonly provider: string;
  readonly modelId: string;
  doStream(options: HarnessCallOptions): PromiseLike<{ stream: ReadableStream<LanguageModelV3StreamPart> }>;
  /**
   * One unstreamed call (the provider's doGenerate), its reply as the parts a
   * stream of it would have had, so both ways share one fold and one error path.
   */
  doGenerate(options: HarnessCallOptions): PromiseLike<{ stream: ReadableStream<LanguageModelV3StreamPart> }>;
}

export function isModelProvider(v: unknown): v is ModelProvider {
  if (typeof v === 'function') return true;
  return typeof v === 'object' && v !== null && typeof (v as Partial<ProviderV3>).languageModel === 'function';
}

/** The model `modelId` of `provider`; a provider that does not know it is one non-retryable failure naming it. */
export function languageModelOf(provider: ModelProvider, modelId: string): StreamingModel {
  let model: LanguageModel;
  try {
    // A provider package's value is callable and a provider: languageModel is the specification's way.
    const p = provider as Partial<ProviderV3 | ProviderV4>;
    model = typeof p.languageModel === 'function' ? p.languageModel(modelId) : (provider as LanguageModelFactory)(modelId);
  } catch (err) {
    if (NoSuchModelError.isInstance(err)) {
      throw ApplicationFailure.create({ type: PROVIDER_UNKNOWN_MODEL, nonRetryable: true, message: `the model provider has no model ${JSON.stringify(modelId)}: ${err.message}` });
    }
    throw err;
  }
  return model.specificationVersion === 'v4' ? fromV4(model) : fromV3(model);
}

function fromV3(model: LanguageModelV3): StreamingModel {
  return {
    provider: model.provider,
    modelId: model.modelId,
    doStream: (options) => model.doStream(asV3(options)),
    async doGenerate(options) {
      const r = await model.doGenerate(asV3(options));
      return { stream: partsOf(r.content, { type: 'finish', usage: r.usage, finishReason: r.finishReason }) };
    },
  };
}

/**
 * A whole reply's content as the stream parts the fold reads: each text as
 * one delta, each tool call whole, then the finish. Other content (reasoning,
 * sources, files) is left out, as the stream's fold leaves it out.
 */
function partsOf(content: readonly (LanguageModelV3Content | LanguageModelV4Content)[], finish: LanguageModelV3StreamPart | null): ReadableStream<LanguageModelV3StreamPart> {
  const parts: LanguageModelV3StreamPart[] = [];
  for (const [i, c] of content.entries()) {
    if (c.type === 'text') parts.push({ type: 'text-start', id: `t${i}` }, { type: 'text-delta', id: `t${i}`, delta: c.text });
    else if (c.type === 'tool-call') parts.push({ type: 'tool-call', toolCallId: c.toolCallId, toolName: c.toolName, input: c.input, ...(c.providerExecuted !== undefined ? { providerExecuted: c.providerExecuted } : {}) });
  }
  if (finish) parts.push(finish);
  return new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(p);
      controller.close();
    },
  });
}

/**
 * A V4 model as the activity reads a V3 one. The call options the activity
 * builds (text, tool calls and results, function tools, maxOutputTokens, the
 * abort signal) mean the same in both specifications; of the stream, only the
 * parts the fold reads are carried (text, tool calls, finish, error), and a
 * finish V3 lacks (`interrupted`: cut short) is no finish.
 */
function fromV4(model: LanguageModelV4): StreamingModel {
  return {
    provider: model.provider,
    modelId: model.modelId,
    async doGenerate(options) {
      const r = await model.doGenerate(asV4(options));
      // Through partOfV4, so a V4 finish V3 lacks (`interrupted`) is no finish here either.
      return { stream: partsOf(r.content, partOfV4({ type: 'finish', usage: r.usage, finishReason: r.finishReason })) };
    },
    async doStream(options) {
      const { stream } = await model.doStream(asV4(options));
      return {
        stream: stream.pipeThrough(
          new TransformStream<LanguageModelV4StreamPart, LanguageModelV3StreamPart>({
            transform(part, controller) {
              const v3 = partOfV4(part);
              if (v3) controller.enqueue(v3);
            },
          }),
        ),
      };
    },
  };
}

function partOfV4(part: LanguageModelV4StreamPart): LanguageModelV3StreamPart | null {
  switch (part.type) {
    case 'text-start':
      return { type: 'text-start', id: part.id };
    case 'text-delta':
      return { type: 'text-delta', id: part.id, delta: part.delta };
    case 'tool-call':
      return { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}) };
    case 'finish': {
      const { unified, raw } = part.finishReason;
      // `interrupted` is V4's word for a stream that ended without the provider's finish (@ai-sdk/anthropic 4
      // adds it when a cut-short stream had text): no finish at all, so the fold calls it cut short, a failed
      // attempt, never a half reply that is charged and kept.
      if (unified === 'interrupted') return null;
      return { type: 'finish', usage: { inputTokens: { ...part.usage.inputTokens }, outputTokens: { ...part.usage.outputTokens } }, finishReason: { unified, raw } };
    }
    case 'error':
      return { type: 'error', error: part.error };
    default:
      return null;
  }
}

export interface AiSdkCall {
  messages: ChatMessage[];
  tools: OpenAiToolDefinition[];
  /** Hard budgets only: maxOutputTokens, the reply the budget pays for. */
  maxTokens?: number;
  signal: AbortSignal;
  tokens: TokenStream;
  /** The run's modelSettings, for a turn's call. */
  settings?: ModelSettings;
  /** The run's outputSchema, for a turn's call. */
  responseFormat?: { type: 'json'; schema: Record<string, unknown>; name: string };
  /** Ask the provider unstreamed (doGenerate): nothing reads the text before the reply ends (AGENT_LIVE_STREAM=events). */
  unstreamed?: boolean;
}

/**
 * The run's settings as the call options of the same names. maxOutputTokens:
 * the lower of the run's and a hard budget's, which must never be lifted.
 */
export function settingsOptions(settings: ModelSettings | undefined, maxTokens: number | undefined): Partial<HarnessCallOptions> {
  const s = settings ?? {};
  const max = s.maxOutputTokens === undefined ? maxTokens : maxTokens === undefined ? s.maxOutputTokens : Math.min(s.maxOutputTokens, maxTokens);
  return {
    ...(max !== undefined ? { maxOutputTokens: max } : {}),
    ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
    ...(s.topP !== undefined ? { topP: s.topP } : {}),
    ...(s.stopSequences !== undefined ? { stopSequences: [...s.stopSequences] } : {}),
    ...(s.seed !== undefined ? { seed: s.seed } : {}),
    ...(s.toolChoice !== undefined ? { toolChoice: { type: s.toolChoice } } : {}),
    ...(s.providerOptions !== undefined ? { providerOptions: s.providerOptions as Record<string, JSONObject> } : {}),
  };
}

/**
 * One streamed call. Resolves with the reply only when the stream finished
 * cleanly; every other end is an ApplicationFailure classified as the
 * by failureOf, or (when `signal` fired) the abort itself.
 */
export async function callLanguageModel(model: StreamingModel, modelId: string, call: AiSdkCall): Promise<ProviderReply> {
  const options: HarnessCallOptions = {
    prompt: toPrompt(call.messages),
    ...(call.tools.length ? { tools: toFunctionTools(call.tools) } : {}),
    ...settingsOptions(call.settings, call.maxTokens),
    ...(call.responseFormat ? { responseFormat: { type: 'json' as const, schema: call.responseFormat.schema as JSONSchema7, name: call.responseFormat.name } } : {}),
    abortSignal: call.signal,
  };
  let stream: ReadableStream<LanguageModelV3StreamPart>;
  try {
    ({ stream } = await (call.unstreamed ? model.doGenerate(options) : model.doStream(options)));
  } catch (err) {
    if (call.signal.aborted) throw err;
    throw failureOf(err, modelId);
  }
  let fold = emptyFold();
  let parts = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts += 1;
      if (value.type === 'text-delta') call.tokens.text(value.delta);
      fold = foldPart(fold, value);
    }
  } catch (err) {
    if (call.signal.aborted) throw err;
    // The body broke off mid-stream (a reset): the provider, not the request, failed.
    throw ApplicationFailure.create({ type: PROVIDER_UNAVAILABLE, message: `the model provider's stream for ${JSON.stringify(modelId)} broke off after ${parts} parts: ${describe(err)}`, cause: err instanceof Error ? err : undefined });
  } finally {
    reader.releaseLock();
  }
  if (call.signal.aborted) throw call.signal.reason instanceof Error ? call.signal.reason : new Error('the model call was stopped');
  if (fold.errors.length) {
    throw ApplicationFailure.create({ type: PROVIDER_MALFORMED_REPLY, message: `the model provider's stream for ${JSON.stringify(modelId)} carried an error part after ${parts} parts: ${describe(fold.errors[0])}` });
  }
  if (!fold.finishReason || !fold.usage) {
    throw ApplicationFailure.create({ type: PROVIDER_MALFORMED_REPLY, message: `the model provider's stream for ${JSON.stringify(modelId)} ended after ${parts} parts without its finish part (cut short)` });
  }
  const reply = replyOf({ content: fold.content, finishReason: fold.finishReason, usage: fold.usage });
  // @ai-sdk/anthropic starts a stream's usage at zeros and reports them when
  // the provider sent none; no prompt is 0 tokens, so a count of 0 is no count
  // (else the reply would be free and no budget would ever stop the run).
  return reply.usage?.promptTokens === 0 ? { ...reply, usage: null } : reply;
}

/** A provider's error in the harness's one classification (the built-in provider's errors are AI SDK errors too). */
export function failureOf(err: unknown, modelId: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (NoSuchModelError.isInstance(err)) {
    return ApplicationFailure.create({ type: PROVIDER_UNKNOWN_MODEL, nonRetryable: true, message: `the model provider has no model ${JSON.stringify(modelId)}: ${err.message}` });
  }
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    if (status === undefined) {
      return ApplicationFailure.create({ type: PROVIDER_UNREACHABLE, message: `could not reach the model provider at ${err.url}: ${describe(err)}` });
    }
    const message = status === 404 ? `the model provider answered 404 for model ${JSON.stringify(modelId)} (no such model?): ${err.message}` : `the model provider answered ${status}: ${err.message}`;
    const type = PROVIDER_VERDICTS[status];
    if (type) return ApplicationFailure.create({ type, message, nonRetryable: true });
    if (status === 429) {
      const delayMs = retryAfterMs(headerOf(err.responseHeaders, 'retry-after'));
      return ApplicationFailure.create({ type: PROVIDER_RATE_LIMITED, message, nextRetryDelay: delayMs ?? undefined });
    }
    return ApplicationFailure.create({ type: PROVIDER_UNAVAILABLE, message });
  }
  // A fetch that failed before an answer (the packages usually wrap it as an APICallError without a status).
  return ApplicationFailure.create({ type: PROVIDER_UNREACHABLE, message: `could not reach the model provider for ${JSON.stringify(modelId)}: ${describe(err)}` });
}

function headerOf(headers: Record<string, string> | undefined, name: string): string | null {
  if (!headers) return null;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? null : (headers[key] ?? null);
}

/** Retry-After as seconds or as an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return Math.round(secs * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return typeof err === 'string' ? err : JSON.stringify(err);
}
