// The model activity: one streamed call to a language model of the AI SDK's
// provider specification (./ai-sdk-model.ts), the team's provider or the
// built-in chat-completions one (./chat-completions.ts). Base URL, key and
// timeouts come from the worker's configuration, never from workflow input,
// so the key never enters history. Failures are classified in one place
// (./ai-sdk-model.ts failureOf): 429/5xx/network are retried by Temporal (429
// after its Retry-After), while 400/401/403/404/422 are not: retrying cannot
// fix them.
import { Context } from '@temporalio/activity';
import { countCompletionTokensAsync, countPromptTokensAsync } from '../node/tokens.js';
import { ApplicationFailure } from '@temporalio/common';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';
import { resolvePrompt, type MessageStore } from './message-store.js';
import type { TraceWriter } from './trace-file.js';
import type { ChatMessage, ModelReply, Usage } from '../common/contract.js';
import { type CallModelInput, type HeldText, type ModelAnswer, type ReadAheadOutcome, type StoppedReply } from '../common/activity-contract.js';
import type { ReadAhead } from './read-ahead.js';
import { promptCountMargin, replyAllowance, type ReplyHold, type ReplyShortfall } from '../common/budget-math.js';
import { heartbeatEvery } from '../node/heartbeat.js';
import { RunningCalls, type RunningCall } from './running-calls.js';
import { callLanguageModel, languageModelOf, retryAfterMs, type ModelProvider } from './ai-sdk-model.js';
import { NO_TOKENS, type TokenSink, type TokenStream } from '../node/token-sink.js';
import { createChatCompletions } from './chat-completions.js';
import { schemaInstruction } from '../common/output-schema.js';
import type { ProviderUsage } from './ai-sdk-prompt.js';
import type { TraceEntry } from '../node/trace-format.js';

export { retryAfterMs };

export interface ModelDeps {
  /** The OpenAI-compatible endpoint of the built-in provider; unused when `provider` is set. */
  baseUrl: string;
  apiKey?: string;
  /** When set, sent as `model` instead of the run's (LLM_MODEL): one setting points every run at a real server. */
  model?: string;
  /** How often a running call heartbeats (default node/heartbeat.ts). */
  heartbeatEveryMs?: number;
  /** The calls a Stop taken by a loop in this process aborts at once (default: a registry of its own). */
  calls?: RunningCalls;
  trace: TraceWriter;
  messageStore: MessageStore;
  /**
   * An AI SDK provider (or model factory) instead of the built-in one:
   * the run's `model` (or `model` above) names the model it is asked for.
   */
  provider?: ModelProvider;
  /** Where each attempt's reply text goes as it arrives (default: nowhere). */
  tokens?: TokenSink;
}


/** A model call's input with its prompt resolved from the store. */
type Prompt = Omit<CallModelInput, 'messages' | 'tools' | 'toolsRef' | 'prefix'> & { messages: ChatMessage[]; tools: OpenAiToolDefinition[]; maxTokens?: number };

/**
 * Decides, with the whole prompt in hand, the hold of a call (its max_tokens); null: do not send it.
 * Async because counting a long prompt is done in time slices, not in one block of the event loop.
 */
type HoldFor = (prompt: Prompt) => Promise<ReplyHold | null>;

/**
 * The model activity, the one for every budget mode. An input with a
 * `budget` (a hard budget's): the prompt is counted over exactly what is sent
 * (o200k_base) and the request carries the largest max_tokens the budget pays
 * for on top of it; when not even minReplyTokens fits, nothing is sent and
 * the workflow parks on its budget. Without one, the call is simply sent.
 */
export function createCallModel(deps: ModelDeps, readAhead?: ReadAhead) {
  const attempt = createAttempt(deps);
  // After the reply: its leading read-only calls, when the run asked (./read-ahead.ts).
  const ahead = async (input: CallModelInput, reply: ModelReply, startedMs: number): Promise<{ readAhead?: ReadAheadOutcome[] }> => {
    if (!readAhead || !input.readAhead) return {};
    const outcomes = await readAhead(input, reply, startedMs);
    return outcomes.length ? { readAhead: outcomes } : {};
  };
  return async function callModel(input: CallModelInput): Promise<ModelAnswer> {
    const startedMs = Date.now();
    const { budget } = input;
    if (!budget) {
      const r = await attempt(input, null);
      if (!r.sent) throw new Error('a model call without a budget was held back');
      return { called: true, reply: r.reply, hold: null, ...(r.heldText ? { heldText: r.heldText } : {}), ...(await ahead(input, r.reply, startedMs)) };
    }
    const held: { shortfall?: ReplyShortfall } = {};
    const r = await attempt(input, async (prompt) => {
      const margin = promptCountMargin(deps.model ?? prompt.model, budget.pricing);
      const allowance = replyAllowance(budget, await countPromptTokensAsync(prompt.messages, prompt.tools), margin);
      if (!allowance.ok) held.shortfall = allowance.shortfall;
      return allowance.ok ? allowance.hold : null;
    });
    if (r.sent && r.hold) return { called: true, reply: r.reply, hold: r.hold, ...(r.heldText ? { heldText: r.heldText } : {}), ...(await ahead(input, r.reply, startedMs)) };
    if (!held.shortfall) throw new Error('the model call was held back without a shortfall');
    return { called: false, shortfall: held.shortfall };
  };
}

function createAttempt(deps: ModelDeps) {
  const calls = deps.calls ?? new RunningCalls();
  // One path: without a provider of the team's, the built-in one, behind the same interface.
  const provider = deps.provider ?? createChatCompletions({ baseURL: deps.baseUrl, ...(deps.apiKey ? { apiKey: deps.apiKey } : {}) });

  return async function callModel(input: CallModelInput, holdFor: HoldFor | null): Promise<{ sent: true; reply: ModelReply; hold: ReplyHold | null; heldText?: HeldText } | { sent: false }> {
    const activity = Context.current();
    const attempt = activity.info.attempt;
    const call = calls.enter(activity);
    // Every attempt is visible in the trace: a retry says so when it starts
    // (its predecessor may have died without a word: a timeout, a crash), and
    // a failure says why before Temporal decides whether to retry it.
    const retry: TraceEntry | null = attempt > 1 ? { seq: input.traceSeq, type: 'model_retry', attempt, step: 0, model: input.model } : null;
    if (retry) deps.trace.write(input.workflowId, input.chainId, retry);
    // Opened once the call is sent: a call held back for want of budget streams nothing.
    let tokens: TokenStream | null = null;
    let held = false;
    // What the reply had said when a Stop cuts it off (workflows/model-turn.ts records it in the result).
    const received = { prompt: null as Prompt | null, text: '' };
    try {
      const { filed, ...resolved } = await resolvePrompt(deps.messageStore, input);
      const prompt: Prompt = toldTheSchema({ ...input, ...resolved }, deps.provider !== undefined);
      received.prompt = prompt;
      const hold = holdFor ? await holdFor(prompt) : null;
      if (holdFor && !hold) {
        await filed;
        return { sent: false };
      }
      // Only a turn's reply is streamed: a summary call (no turn) is not what the run says. A worker that
      // streams nothing (NO_TOKENS: AGENT_LIVE_STREAM=events) asks the provider unstreamed.
      const sink = deps.tokens ?? NO_TOKENS;
      const streamed = input.turn !== undefined && sink !== NO_TOKENS;
      // The live stream's sink while nobody reads the run: the reply still streams from the provider
      // (a Stop keeps what arrived), but nothing is published; the workflow publishes the text at the end.
      held = streamed && sink.onlyWhileWatched === true && input.watched === false;
      tokens = streamed && input.turn !== undefined ? keepingText(held ? (sink.openLines?.({ workflowId: input.workflowId, turn: input.turn, attempt }) ?? NO_STREAM) : sink.open({ workflowId: input.workflowId, turn: input.turn, attempt }), received) : null;
      if (retry) tokens?.line?.(retry);
      const reply = await callWith(hold ? { ...prompt, maxTokens: hold.maxTokens } : prompt, activity, call, tokens ?? NO_STREAM, !streamed);
      // Filed before the workflow hears of the reply, so the next turn can send them by address.
      await Promise.all([filed, deps.messageStore.file(JSON.stringify(reply.message)).written]);
      await closeQuietly(tokens, 'counted');
      return { sent: true, reply, hold, ...(held ? { heldText: { attempt } } : {}) };
    } catch (err) {
      // On the trace, and on the live stream before the attempt's end.
      const line = (entry: TraceEntry) => {
        deps.trace.write(input.workflowId, input.chainId, entry);
        tokens?.line?.(entry);
      };
      if (call.signal.aborted) {
        // The moment the Stop reached the call, on record (the benchmark measures it).
        line({ seq: input.traceSeq, type: 'model_cancelled', attempt, step: 1, ...(received.text ? { receivedChars: received.text.length } : {}) });
        const [stopped] = await Promise.all([stoppedReply(input, attempt, received), closeQuietly(tokens, 'stopped')]);
        const details: StoppedReply | undefined = stopped && held ? { ...stopped, heldText: { attempt } } : stopped;
        // The abort's own reason, not `err`: a provider package reports the abort as an error of its own
        // (the AI SDK's AI_APICallError), which would leave the attempt failed, and retryable, instead of cancelled.
        throw call.outcome(call.signal.reason ?? err, details);
      }
      const failure = err instanceof ApplicationFailure ? err : null;
      line({
        seq: input.traceSeq,
        type: 'model_error',
        attempt,
        step: 1,
        errorType: failure?.type ?? (err instanceof Error ? err.name : 'Error'),
        message: err instanceof Error ? err.message : String(err),
        retryable: !(failure?.nonRetryable ?? false),
      });
      await closeQuietly(tokens, 'failed');
      throw err;
    } finally {
      call.release();
    }
  };

  /** One attempt with the whole prompt in hand. */
  async function callWith(input: Prompt, activity: Context, call: RunningCall, tokens: TokenStream, unstreamed: boolean): Promise<ModelReply> {
    const attempt = activity.info.attempt;
    if (input.debug) {
      const request: TraceEntry = {
        seq: input.traceSeq,
        type: 'model_request',
        attempt,
        step: 2,
        model: deps.model ?? input.model,
        tools: input.tools.map((t) => t.function.name),
        messages: input.messages.map((m, i) => ({ n: i + 1, ...m })),
      };
      deps.trace.write(input.workflowId, input.chainId, request);
      tokens.line?.(request);
    }
    return callProvider(input, activity, call, tokens, unstreamed);
  }

  /** One attempt: streamed, each text delta to the sink as it arrives; or, when nothing would read the deltas, unstreamed. */
  async function callProvider(input: Prompt, activity: Context, call: RunningCall, tokens: TokenStream, unstreamed: boolean): Promise<ModelReply> {
    const modelId = deps.model ?? input.model;
    // No heartbeat at the start: a call shorter than the interval sends none.
    const ticker = setInterval(() => activity.heartbeat(), heartbeatEvery(deps.heartbeatEveryMs, activity.info.heartbeatTimeoutMs));
    try {
      const r = await callLanguageModel(languageModelOf(provider, modelId), modelId, {
        messages: input.messages,
        tools: input.tools,
        maxTokens: input.maxTokens,
        signal: call.signal,
        tokens,
        unstreamed,
        ...(input.settings ? { settings: input.settings } : {}),
        ...(input.responseFormat ? { responseFormat: input.responseFormat } : {}),
      });
      // A reply without usage would count as free, and no budget would ever stop
      // the run: it is priced from our own count (o200k_base) and flagged.
      const usage: Usage = r.usage
        ? usageOf(r.usage)
        : { promptTokens: await countPromptTokensAsync(input.messages, input.tools), completionTokens: await countCompletionTokensAsync(r.message.content, r.message.tool_calls) };
      return { message: r.message, usage, ...(r.usage ? {} : { usageEstimated: true }), finishReason: r.finishReason, model: modelId };
    } finally {
      clearInterval(ticker);
    }
  }

}

/**
 * A turn under an outputSchema, sent through an AI SDK provider: the schema is
 * said in the system prompt as well as passed as `responseFormat`, since the
 * harness cannot see whether the package gives it to the model
 * (@ai-sdk/openai-compatible without supportsStructuredOutputs sends only
 * `json_object`). The built-in provider sends it natively (`response_format`
 * json_schema), nothing in the prompt. Only the request changes: the
 * transcript keeps the run's own system prompt.
 */
function toldTheSchema(prompt: Prompt, inPrompt: boolean): Prompt {
  if (!prompt.responseFormat || !inPrompt) return prompt;
  const said = schemaInstruction(prompt.responseFormat.schema);
  const [first, ...rest] = prompt.messages;
  const messages: ChatMessage[] = first?.role === 'system' ? [{ role: 'system', content: `${first.content}\n\n${said}` }, ...rest] : [{ role: 'system', content: said }, ...prompt.messages];
  return { ...prompt, messages };
}

/** The token stream, keeping the text it was given: a Stop's cancellation carries it. */
function keepingText(stream: TokenStream, received: { text: string }): TokenStream {
  return {
    ...stream,
    text: (delta) => {
      received.text += delta;
      stream.text(delta);
    },
  };
}

/** A turn's reply cut off by a Stop after some of its text arrived: that text, and our count of the attempt's prompt and of it. */
async function stoppedReply(input: CallModelInput, attempt: number, received: { prompt: Prompt | null; text: string }): Promise<StoppedReply | undefined> {
  if (input.turn === undefined || received.text === '' || !received.prompt) return undefined;
  try {
    const [promptTokens, completionTokens] = await Promise.all([
      countPromptTokensAsync(received.prompt.messages, received.prompt.tools),
      countCompletionTokensAsync(received.text, undefined),
    ]);
    return { partialReply: { turn: input.turn, attempt, text: received.text, usage: { promptTokens, completionTokens } } };
  } catch {
    return undefined; // the Stop is what matters; its record is a courtesy
  }
}

/** The stream of a call that is not a turn (a summary): written nowhere. */
const NO_STREAM: TokenStream = { text: () => undefined, close: async () => undefined };

/** A sink's close never fails the model call (its contract); a sink that breaks it anyway is ignored here too. */
async function closeQuietly(tokens: TokenStream | null, outcome: 'counted' | 'failed' | 'stopped'): Promise<void> {
  try {
    await tokens?.close(outcome);
  } catch {
    // the stream is a view of the call, never its outcome
  }
}

/** A provider's counts as the reply's usage: the cache and reasoning counts only when reported. */
function usageOf(u: ProviderUsage): Usage {
  return {
    promptTokens: u.promptTokens,
    completionTokens: u.completionTokens,
    ...(u.cacheReadTokens !== undefined ? { cacheReadTokens: u.cacheReadTokens } : {}),
    ...(u.cacheWriteTokens !== undefined ? { cacheWriteTokens: u.cacheWriteTokens } : {}),
    ...(u.reasoningTokens !== undefined ? { reasoningTokens: u.reasoningTokens } : {}),
  };
}
