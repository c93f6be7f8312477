// The model activity's second backend: an AI SDK provider of the team's choice (a LanguageModelV3
// from @ai-sdk/anthropic, @ai-sdk/openai-compatible, …), called through
// doStream so the reply's text reaches the token sink as it arrives. Only
// activities and worker code import this: the workflow sandbox never sees a
// provider (lint enforces it). The failures keep the classification of the
// built-in client (./model.ts): 429 waits out its retry-after, 5xx and network
// failures are retried, 400/401/403/404/422 are not; a stream that carries an
// error part or ends without its finish is a failed attempt, never a half
// reply that is charged and kept.
import { APICallError, NoSuchModelError, type LanguageModelV3, type LanguageModelV3CallOptions, type LanguageModelV3StreamPart, type ProviderV3 } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/common';
import { PROVIDER_RATE_LIMITED, PROVIDER_UNAVAILABLE, PROVIDER_UNREACHABLE } from '../common/provider-errors.js';
import { replyOf, toFunctionTools, toPrompt, type ProviderReply } from '../common/ai-sdk-prompt.js';
import { emptyFold, foldPart } from '../common/ai-sdk-stream.js';
import type { ChatMessage } from '../common/contract.js';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';
import type { TokenStream } from '../common/token-sink.js';

/** A model by its id: what `createAnthropic(...)` returns is one (and a ProviderV3 too). */
export type LanguageModelFactory = (modelId: string) => LanguageModelV3;

/** What a worker is given to reach its models: a factory, or a provider whose languageModel(id) is used. */
export type ModelProvider = LanguageModelFactory | ProviderV3;

/** The type of the failure an unknown model gives: not retried, it names the model. */
export const PROVIDER_UNKNOWN_MODEL = 'ProviderUnknownModel';
/** A stream that carried an error part or ended without its finish: retried, nothing charged. */
export const PROVIDER_MALFORMED_REPLY = 'ProviderMalformedReply';

const NON_RETRYABLE: Record<number, string> = {
  400: 'ProviderBadRequest',
  401: 'ProviderUnauthorized',
  403: 'ProviderForbidden',
  404: PROVIDER_UNKNOWN_MODEL,
  422: 'ProviderBadRequest',
};

export function isModelProvider(v: unknown): v is ModelProvider {
  if (typeof v === 'function') return true;
  return typeof v === 'object' && v !== null && typeof (v as Partial<ProviderV3>).languageModel === 'function';
}

/** The model `modelId` of `provider`; a provider that does not know it is one non-retryable failure naming it. */
export function languageModelOf(provider: ModelProvider, modelId: string): LanguageModelV3 {
  try {
    // A provider package's value is callable and a ProviderV3: languageModel is the specification's way.
    const p = provider as Partial<ProviderV3>;
    return typeof p.languageModel === 'function' ? p.languageModel(modelId) : (provider as LanguageModelFactory)(modelId);
  } catch (err) {
    if (NoSuchModelError.isInstance(err)) {
      throw ApplicationFailure.create({ type: PROVIDER_UNKNOWN_MODEL, nonRetryable: true, message: `the model provider has no model ${JSON.stringify(modelId)}: ${err.message}` });
    }
    throw err;
  }
}

export interface AiSdkCall {
  messages: ChatMessage[];
  tools: OpenAiToolDefinition[];
  /** Hard budgets only: maxOutputTokens, the reply the budget pays for. */
  maxTokens?: number;
  signal: AbortSignal;
  tokens: TokenStream;
}

/**
 * One streamed call. Resolves with the reply only when the stream finished
 * cleanly; every other end is an ApplicationFailure classified as the
 * built-in client's are, or (when `signal` fired) the abort itself.
 */
export async function callLanguageModel(model: LanguageModelV3, modelId: string, call: AiSdkCall): Promise<ProviderReply> {
  const options: LanguageModelV3CallOptions = {
    prompt: toPrompt(call.messages),
    ...(call.tools.length ? { tools: toFunctionTools(call.tools) } : {}),
    ...(call.maxTokens !== undefined ? { maxOutputTokens: call.maxTokens } : {}),
    abortSignal: call.signal,
  };
  let stream: ReadableStream<LanguageModelV3StreamPart>;
  try {
    ({ stream } = await model.doStream(options));
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

/** An AI SDK error in the harness's classification. */
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
    const type = NON_RETRYABLE[status];
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
