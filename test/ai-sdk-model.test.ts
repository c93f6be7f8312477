// The model activity on AI SDK providers, end to end: a real Temporal dev
// server, real workers whose model is the real @ai-sdk/anthropic
// (POST /v1/messages) or @ai-sdk/openai-compatible (POST /v1/chat/completions)
// of both provider specifications (V3: anthropic 3.x, openai-compatible 2.x;
// V4, AI SDK 7: anthropic 4.x, openai-compatible 3.x, installed under npm
// aliases) pointed at scripted providers by base URL, and the run's every
// exit; beside them the built-in chat-completions provider, behind the same
// interface and classified by the same table. Each backend gets a fast
// provider (runs, faults, money) and a slow one (a Stop that lands in the
// middle of a streamed reply).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createAnthropic as createAnthropicV4 } from '@ai-sdk/anthropic-v4';
import { createOpenAICompatible as createOpenAICompatibleV4 } from '@ai-sdk/openai-compatible-v3';
import { addFault, freshWorkspace, marker, providerRequests, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { startProvider, type RunningProvider, type Scenario } from '../dev/provider/server.js';
import { providerConnections } from '../dev/provider/control.js';
import { approveSignal, cancelSignal } from '../common/run-messages.js';
import { languageModelOf, type ModelProvider } from '../activities/ai-sdk-model.js';
import { NoSuchModelError } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/common';
import { loadConfig } from '../node/config.js';
import { pluginOptionsFromEnv } from '../worker/env-options.js';
import { providerFromEnv } from '../worker/model-provider.js';
import { AgentPlugin } from '../worker/agent-plugin.js';
import type { TokenAttempt, TokenSink } from '../node/token-sink.js';
import type { AgentInput, Pricing } from '../common/contract.js';
import type { Fault } from '../dev/provider/faults.js';
import type { agentRun } from '../workflows/index.js';

type Backend = 'anthropic' | 'openai-compatible' | 'anthropic-v4' | 'openai-compatible-v4' | 'builtin';
const protocolOf = (b: Backend) => (b.startsWith('anthropic') ? 'anthropic' : 'chat');
const KEY = 'sk-scripted';
const ANSWER = 'errors.log mentions a timeout: worker 7 timed out after 30000 ms.';
const CACHE = { read: 50, write: 10 };
const BACKENDS: Backend[] = ['anthropic', 'openai-compatible', 'anthropic-v4', 'openai-compatible-v4', 'builtin'];
const CACHED_PRICING: Pricing = { inputPerMTokUsd: 2, outputPerMTokUsd: 12, cacheReadPerMTokUsd: 0.2, cacheWritePerMTokUsd: 2.5 };
/** A long text answer: on the slow provider its stream lasts seconds, so a Stop lands in the middle. */
const LONG = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');

const h = useHarness({ worker: false });

let fast: RunningProvider;
let slow: RunningProvider;

/** What the token sink was handed: each attempt's deltas and how it closed. */
interface Recorded {
  call: TokenAttempt;
  text: string[];
  outcome?: 'counted' | 'failed' | 'stopped';
}
const recorded: Recorded[] = [];
const tokens: TokenSink = {
  open: (call) => {
    const r: Recorded = { call, text: [] };
    recorded.push(r);
    return {
      text: (d) => void r.text.push(d),
      close: async (outcome) => void (r.outcome = outcome),
    };
  },
};
const streamsOf = (workflowId: string) => recorded.filter((r) => r.call.workflowId === workflowId);

// Typed as ModelProvider without a cast: a V4 provider is accepted as it is (AI SDK 7).
function providerOf(backend: Backend, at: RunningProvider): ModelProvider | null {
  switch (backend) {
    case 'builtin':
      return null;
    case 'anthropic':
      return createAnthropic({ baseURL: at.url, apiKey: KEY });
    case 'openai-compatible':
      return createOpenAICompatible({ baseURL: at.url, name: 'scripted', apiKey: KEY, includeUsage: true });
    case 'anthropic-v4':
      return createAnthropicV4({ baseURL: at.url, apiKey: KEY });
    case 'openai-compatible-v4':
      return createOpenAICompatibleV4({ baseURL: at.url, name: 'scripted', apiKey: KEY, includeUsage: true });
  }
}

const queues: Record<string, string> = {};
const workers: { shutdown(): Promise<void> }[] = [];

beforeAll(async () => {
  const scenarios: Record<string, Scenario> = {
    // plan, with a prompt cache reported on every reply.
    cached_plan: ({ turn }) =>
      turn === 0
        ? { type: 'calls' as const, calls: [{ id: 'c1', name: 'list_files', args: {} }], cache: CACHE }
        : turn === 1
          ? { type: 'calls' as const, calls: [{ id: 'c2', name: 'read_file', args: { path: 'errors.log' } }], cache: CACHE }
          : { type: 'answer' as const, content: ANSWER, cache: CACHE },
    chatty: () => ({ type: 'answer' as const, content: LONG }),
  };
  [fast, slow] = await Promise.all([startProvider({ apiKey: KEY, streamChunkDelayMs: 1, scenarios }), startProvider({ apiKey: KEY, streamChunkDelayMs: 150, scenarios })]);
  for (const backend of BACKENDS) {
    for (const [speed, at] of [
      ['fast', fast],
      ['slow', slow],
    ] as const) {
      const taskQueue = `ai-sdk-${backend}-${speed}-${randomUUID().slice(0, 6)}`;
      queues[`${backend}-${speed}`] = taskQueue;
      const provider = providerOf(backend, at);
      workers.push(await h.startWorker({ taskQueue, ...(provider ? { modelProvider: provider } : { llmBaseUrl: at.url, llmApiKey: KEY }), tokens, modelPrices: { cached_plan: CACHED_PRICING } }));
    }
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.shutdown()));
  await Promise.all([fast?.close(), slow?.close()]);
});

async function start(protocol: Backend, input: AgentInput, speed: 'fast' | 'slow' = 'fast') {
  const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queues[`${protocol}-${speed}`], workflowId: `ai-sdk-${input.model ?? 'plan'}-${randomUUID().slice(0, 8)}`, args: [input] });
  return handle;
}
const run = async (protocol: Backend, input: AgentInput) => (await start(protocol, input)).result();
const turnLines = (workflowId: string) => h.events(workflowId).filter((l) => l.type === 'turn');

describe.each(BACKENDS)('%s', (protocol) => {
  const url = () => fast.url;

  it('plan completes: the answer, three turns, each turn streamed to the sink and counted, the cost the price arithmetic', { timeout: 60_000 }, async () => {
    const m = marker();
    const handle = await start(protocol, { task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: ANSWER, turns: 3, toolRuns: 2, error: null });
    const streams = streamsOf(handle.workflowId);
    expect(streams.map((s) => [s.call.turn, s.call.attempt, s.outcome])).toEqual([
      [1, 1, 'counted'],
      [2, 1, 'counted'],
      [3, 1, 'counted'],
    ]);
    // The answer arrived in pieces, as the provider streamed it.
    expect(streams[2].text.length).toBeGreaterThan(1);
    expect(streams[2].text.join('')).toBe(ANSWER);
    expect(r.costUsd).toBeCloseTo((r.usage.promptTokens * 2 + r.usage.completionTokens * 12) / 1e6, 12);
    expect(r.promptTokensPerTurn.reduce((a, b) => a + b, 0)).toBe(r.usage.promptTokens);
    // Every request was streamed, on the protocol of the package.
    const reqs = await providerRequests(url(), m);
    expect(reqs.map((q) => [q.protocol, q.stream, q.status])).toEqual(Array.from({ length: 3 }, () => [protocolOf(protocol), true, 200]));
  });

  it('destructive waits for approval, then deletes and answers', { timeout: 60_000 }, async () => {
    const handle = await start(protocol, { task: `Free some space. ${marker()}`, model: 'destructive', workspace: freshWorkspace() });
    const s = await waitForApproval(handle, 'c2');
    expect(s.interruption).toMatchObject({ type: 'approval', callId: 'c2', toolName: 'delete_file' });
    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.', turns: 3, toolRuns: 2 });
  });

  it('a hard budget holds each call to the maxOutputTokens it pays for, and completes', { timeout: 60_000 }, async () => {
    const handle = await start(protocol, { task: `Which file mentions a timeout? ${marker()}`, model: 'plan', limits: { maxBudgetUsd: 0.05, budgetMode: 'hard' } });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: ANSWER, turns: 3 });
    const lines = turnLines(handle.workflowId);
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l).toMatchObject({ maxTokens: expect.any(Number), heldUsd: expect.any(Number) });
    expect(r.costUsd).toBeLessThanOrEqual(0.05);
  });

  it('a hard budget still refuses a model without a price, before any call', { timeout: 60_000 }, async () => {
    const m = marker();
    // Bad input fails the workflow itself, non-retryable, naming the field (the contract's "Bad input").
    await expect(run(protocol, { task: `Say a lot. ${m}`, model: 'chatty', limits: { maxBudgetUsd: 0.05, budgetMode: 'hard' } })).rejects.toMatchObject({
      cause: { type: 'InvalidInput', nonRetryable: true, message: expect.stringMatching(/"chatty" has no price/) },
    });
    expect(await providerRequests(url(), m)).toHaveLength(0);
  });

  it.each<[string, Fault, string, RegExp]>([
    ['429 (after its retry-after)', { type: 'status', status: 429, retryAfterSec: 1 }, 'ProviderRateLimited', /answered 429/],
    ['500', { type: 'status', status: 500 }, 'ProviderUnavailable', /answered 500/],
    // One stream fold for every provider: the built-in one's parse error is an error part too.
    ['a malformed stream part', { type: 'malformed' }, 'ProviderMalformedReply', protocol === 'builtin' ? /carried an error part after \d+ parts: the stream carried a part that is not JSON/ : /carried an error part/],
    // @ai-sdk/anthropic ends quietly without a finish part; @ai-sdk/openai-compatible sends an error part, then a finish.
    ['a truncated stream', { type: 'truncated' }, 'ProviderMalformedReply', { anthropic: /without its finish part/, 'anthropic-v4': /without its finish part/, 'openai-compatible': /carried an error part/, 'openai-compatible-v4': /carried an error part/, builtin: /without its finish part \(cut short\)/ }[protocol]],
  ])('%s: one failed attempt, then the retry counts, charged once', { timeout: 90_000 }, async (_name, fault, errorType, message) => {
    const m = marker();
    const input: AgentInput = { task: `Which file mentions a timeout? ${m}`, model: 'plan' };
    await addFault(url(), { match: { taskIncludes: m, turn: 1 }, fault, times: 1 });
    const handle = await start(protocol, input);
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: ANSWER, turns: 3 });
    const streams = streamsOf(handle.workflowId);
    expect(streams.map((s) => [s.call.turn, s.call.attempt, s.outcome])).toEqual([
      [1, 1, 'counted'],
      [2, 1, 'failed'],
      [2, 2, 'counted'],
      [3, 1, 'counted'],
    ]);
    const errors = h.trace(handle.workflowId).filter((l) => l.type === 'model_error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ retryable: true, errorType, message: expect.stringMatching(message) });
    // The same run again, the fault gone: the same prompts, the same tokens, the same money.
    const clean = await run(protocol, input);
    expect(r.usage).toEqual(clean.usage);
    expect(r.costUsd).toBe(clean.costUsd);
  });

  it('a stream cut short in the middle of its text answer: a failed attempt, never a half answer charged and kept (V4 packages call it an `interrupted` finish)', { timeout: 90_000 }, async () => {
    const m = marker();
    // Turn 2 is the text answer: past its first events, text has arrived when the stream ends.
    await addFault(url(), { match: { taskIncludes: m, turn: 2 }, fault: { type: 'truncated', afterParts: 6 }, times: 1 });
    const handle = await start(protocol, { task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: ANSWER, turns: 3, usageEstimatedTurns: 0 });
    expect(streamsOf(handle.workflowId).map((s) => [s.call.turn, s.call.attempt, s.outcome])).toEqual([
      [1, 1, 'counted'],
      [2, 1, 'counted'],
      [3, 1, 'failed'],
      [3, 2, 'counted'],
    ]);
    expect(h.trace(handle.workflowId).filter((l) => l.type === 'model_error')).toEqual([expect.objectContaining({ retryable: true, errorType: 'ProviderMalformedReply' })]);
  });

  it('a reply without usage is priced from our own count and flagged (Anthropic: refused by its package, retried)', { timeout: 60_000 }, async () => {
    const m = marker();
    await addFault(url(), { match: { taskIncludes: m }, fault: { type: 'no_usage' }, times: protocolOf(protocol) === 'anthropic' ? 1 : 3 });
    const handle = await start(protocol, { task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    const r = await handle.result();
    if (protocolOf(protocol) === 'anthropic') {
      // @ai-sdk/anthropic's schema requires message_start's usage (the real API always sends it): a failed attempt, never a free reply.
      expect(r).toMatchObject({ status: 'completed', output: ANSWER, turns: 3, usageEstimatedTurns: 0 });
      // @ai-sdk/anthropic 4 checks the stream's first part and throws its own plain Error for it (the schema's words are lost).
      const said = protocol === 'anthropic' ? /usage/ : /Expected a normalized Anthropic stream error/;
      expect(h.trace(handle.workflowId).filter((l) => l.type === 'model_error')).toEqual([expect.objectContaining({ retryable: true, message: expect.stringMatching(said) })]);
      return;
    }
    expect(r).toMatchObject({ status: 'completed', output: ANSWER, turns: 3, usageEstimatedTurns: 3 });
    expect(r.usage.promptTokens).toBeGreaterThan(0);
    expect(turnLines(handle.workflowId).every((l) => l.usageEstimated === true)).toBe(true);
  });

  it('a model the provider does not know: one non-retryable failure naming it, one request', { timeout: 60_000 }, async () => {
    const m = marker();
    // Priced in the input: a model without a price under a USD budget would be refused before any request.
    const r = await run(protocol, { task: `Hello ${m}`, model: 'no-such-model', pricing: { inputPerMTokUsd: 2, outputPerMTokUsd: 12 } });
    expect(r.status).toBe('failed');
    expect(JSON.stringify(r.error)).toMatch(/no-such-model/);
    const errors = h.trace(r.runId).filter((l) => l.type === 'model_error');
    // One classification for every provider, the built-in one included: a 404 is ProviderUnknownModel, its message naming the model.
    expect(errors).toEqual([expect.objectContaining({ errorType: 'ProviderUnknownModel', retryable: false, message: expect.stringMatching(/404 for model "no-such-model"/) })]);
    expect(await providerRequests(url(), m)).toHaveLength(1);
  });

  it('cache tokens are priced at their own rates', { timeout: 60_000 }, async () => {
    const handle = await start(protocol, { task: `Which file mentions a timeout? ${marker()}`, model: 'cached_plan', pricing: CACHED_PRICING });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 3 });
    const lines = turnLines(handle.workflowId);
    expect(lines).toHaveLength(3);
    // Anthropic reports reads and writes; OpenAI's usage reports reads only (its writes are plain input).
    const write = protocolOf(protocol) === 'anthropic' ? CACHE.write : 0;
    const expected = lines.reduce((sum, l) => {
      const prompt = Number(l.prompt_tokens);
      const completion = Number(l.completion_tokens);
      return sum + ((prompt - CACHE.read - write) * 2 + CACHE.read * 0.2 + write * 2.5 + completion * 12) / 1e6;
    }, 0);
    expect(r.costUsd).toBeCloseTo(expected, 12);
    // Cheaper than the same tokens at the prompt rate.
    expect(r.costUsd).toBeLessThan((r.usage.promptTokens * 2 + r.usage.completionTokens * 12) / 1e6);
  });

  it('a Stop in the middle of a streamed reply closes the provider request; the run ends interrupted, the attempt closed as stopped', { timeout: 60_000 }, async () => {
    // `chatty` has no price on these workers: the input gives one, or its default USD budget would refuse it.
    const handle = await start(protocol, { task: `Say a lot. ${marker()}`, model: 'chatty', pricing: { inputPerMTokUsd: 2, outputPerMTokUsd: 12 } }, 'slow');
    // Some text has arrived and the stream is still open.
    const stream = await waitFor('the first text delta', () => streamsOf(handle.workflowId).find((s) => s.text.length > 0));
    expect((await providerConnections(slow.url)).streams).toBeGreaterThanOrEqual(1);
    await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
    expect(await handle.result()).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' } });
    await waitFor('the provider to see the stream closed', async () => ((await providerConnections(slow.url)).streams === 0 ? true : null), 5_000);
    await waitFor('the attempt to close', () => stream.outcome);
    expect(stream.outcome).toBe('stopped');
    expect(stream.text.join('').length).toBeLessThan(LONG.length);
    // The text that arrived is in the result, marked as cut off, and not in the transcript.
    const result = await handle.result();
    const partial = result.interruption?.type === 'cancelled' ? result.interruption.partialReply : undefined;
    expect(partial?.text).toBe(stream.text.join(''));
    expect(partial?.estimatedCostUsd).toBeGreaterThan(0);
    expect((await handle.query<{ role: string }[]>('transcript')).map((m) => m.role)).toEqual(['user']);
    // The attempt ended cancelled, not failed (a failed one could be retried after the Stop).
    const { events } = await handle.fetchHistory();
    expect(events?.filter((e) => e.activityTaskCanceledEventAttributes).length).toBe(1);
    expect(events?.some((e) => e.activityTaskFailedEventAttributes)).toBe(false);
    expect(h.trace(handle.workflowId).some((l) => l.type === 'model_cancelled')).toBe(true);
  });
});

describe('configuration', () => {
  it('LLM_PROVIDER picks the provider package; a value it does not know is one line naming it', () => {
    const fromEnv = pluginOptionsFromEnv({ LLM_PROVIDER: 'anthropic', LLM_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(fromEnv.modelAt).toBe('http://127.0.0.1:9/v1 (anthropic)');
    expect(fromEnv.plugin.model).toHaveProperty('provider');
    expect(pluginOptionsFromEnv({}).plugin.model).toEqual({ baseUrl: 'http://127.0.0.1:8787/v1' });
    expect(() => loadConfig({ LLM_PROVIDER: 'bedrock' })).toThrow(/LLM_PROVIDER must be one of builtin, anthropic, openai-compatible, got "bedrock"/);
    expect(providerFromEnv('builtin', 'http://127.0.0.1:9/v1', undefined)).toBeNull();
    const anthropic = providerFromEnv('anthropic', 'http://127.0.0.1:9/v1', KEY);
    const compatible = providerFromEnv('openai-compatible', 'http://127.0.0.1:9/v1', KEY);
    expect(anthropic && languageModelOf(anthropic, 'plan').provider).toMatch(/^anthropic/);
    expect(compatible && languageModelOf(compatible, 'plan').provider).toMatch(/^openai-compatible/);
  });

  it('a factory that knows no such model: one non-retryable failure naming it', () => {
    const factory = (modelId: string): never => {
      throw new NoSuchModelError({ modelId, modelType: 'languageModel' });
    };
    let thrown: unknown;
    try {
      languageModelOf(factory, 'gpt-17');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({ type: 'ProviderUnknownModel', nonRetryable: true, message: expect.stringMatching(/no model "gpt-17"/) });
  });

  it('AgentPlugin refuses a provider that is neither a factory nor a provider, naming the option; takes V3 and V4 providers as they are typed (AI SDK 6 and 7)', () => {
    expect(() => new AgentPlugin({ model: { provider: 42 as unknown as ModelProvider }, workspace: '/tmp/x' })).toThrow(/^AgentPlugin option model\.provider must be an AI SDK provider/);
    expect(() => new AgentPlugin({ model: { provider: createAnthropic({ baseURL: 'http://127.0.0.1:9/v1', apiKey: KEY }) }, workspace: '/tmp/x' })).not.toThrow();
    // No cast: this file does not type-check if the option's type refuses LanguageModelV4 (tsc runs over test/).
    expect(() => new AgentPlugin({ model: { provider: createAnthropicV4({ baseURL: 'http://127.0.0.1:9/v1', apiKey: KEY }) }, workspace: '/tmp/x' })).not.toThrow();
    expect(() => new AgentPlugin({ model: { provider: createOpenAICompatibleV4({ baseURL: 'http://127.0.0.1:9/v1', name: 'x' }) }, workspace: '/tmp/x' })).not.toThrow();
    expect(languageModelOf(createAnthropicV4({ baseURL: 'http://127.0.0.1:9/v1', apiKey: KEY }), 'plan').provider).toMatch(/^anthropic/);
  });
});
