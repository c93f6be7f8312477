// Provider faults the harness cannot see coming: the scripted provider injects
// them per request; the model activity retries what can be retried and fails
// fast, with the provider's message, on what cannot.
import { describe, expect, it } from 'vitest';
import { addFault, marker, providerRequests, useHarness } from './helpers/harness.js';

const h = useHarness();

describe('provider faults', () => {
  it('429 with Retry-After: waits as told, retries, and pays once', async () => {
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 0 }, fault: { type: 'status', status: 429, retryAfterSec: 1 }, times: 1 });
    const clean = await h.run({ task: `Which file mentions a timeout? ${m.replace('m-', 'c-')}`, model: 'plan' });
    const r = await h.run({ task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    expect(r).toMatchObject({ status: 'completed', turns: 3 });
    const log = await providerRequests(h.providerUrl, m);
    expect(log.map((l) => [l.turn, l.status])).toEqual([[0, 429], [0, 200], [1, 200], [2, 200]]);
    expect(log[1].at - log[0].at).toBeGreaterThanOrEqual(950);
    // The refused attempt costs nothing: same money as a run without the fault.
    expect(r.costUsd).toBeCloseTo(clean.costUsd, 12);
    const errors = h.trace(r.runId).filter((l) => l.type === 'model_error' || l.type === 'model_retry');
    expect(errors.map((l) => [l.type, l.attempt])).toEqual([['model_error', 1], ['model_retry', 2]]);
    expect(errors[0]).toMatchObject({ errorType: 'ProviderRateLimited', retryable: true });
  });

  it.each([
    ['500', { type: 'status', status: 500 } as const],
    ['a connection reset', { type: 'reset' } as const],
    ['a malformed JSON body', { type: 'malformed' } as const],
  ])('%s once: retried, and the run completes', async (_name, fault) => {
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 1 }, fault, times: 1 });
    const r = await h.run({ task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 2 });
    expect((await providerRequests(h.providerUrl, m)).filter((l) => l.turn === 1)).toHaveLength(2);
  });

  it('401: not retried; the run ends failed with the provider message, fast', async () => {
    const m = marker();
    await addFault(h.providerUrl, {
      match: { taskIncludes: m },
      fault: { type: 'status', status: 401, message: 'Incorrect API key provided.' },
      times: 5,
    });
    const r = await h.run({ task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    expect(r).toMatchObject({ status: 'failed', turns: 0, costUsd: 0 });
    expect(r.error).toBe('the model provider answered 401: Incorrect API key provided.');
    // The failure keeps its type, for alerting.
    expect(r.errorType).toBe('ProviderUnauthorized');
    expect(await providerRequests(h.providerUrl, m)).toHaveLength(1);
  });

  it('a reply slower than the model timeout: that attempt is abandoned, the retry answers, the trace shows both', async () => {
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 0 }, fault: { type: 'delay', ms: 4000 }, times: 1 });
    const handle = await h.start({ task: `Which file mentions a timeout? ${m}`, model: 'plan', modelTimeoutMs: 1000 });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 3 });
    const retries = h.trace(handle.workflowId).filter((l) => l.type === 'model_retry');
    expect(retries.map((l) => l.attempt)).toEqual([2]);
    // Paid once per reply used: exactly the three turns' price.
    expect(r.costUsd).toBeCloseTo((r.usage.promptTokens * 2 + r.usage.completionTokens * 12) / 1e6, 12);
    expect(r.promptTokensPerTurn).toHaveLength(3);
  });

  it.each([
    [403, 'Project not allowed to use this model.'],
    [400, 'Invalid value for messages.'],
  ])('%i: not retried; failed with the provider message, and the trace says why', async (status, message) => {
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m }, fault: { type: 'status', status, message }, times: 3 });
    const handle = await h.start({ task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'failed', turns: 0, error: `the model provider answered ${status}: ${message}` });
    expect(await providerRequests(h.providerUrl, m)).toHaveLength(1);
    expect(h.trace(handle.workflowId).find((l) => l.type === 'model_error')).toMatchObject({ attempt: 1, retryable: false });
  });

  it('an unknown model name is a 404: failed, not retried', async () => {
    // Priced in the input: a model without a price under a USD budget is refused before any request.
    const r = await h.run({ task: 'Hello?', model: 'no-such-model', pricing: { inputPerMTokUsd: 2, outputPerMTokUsd: 12 } });
    expect(r.status).toBe('failed');
    expect(r.error).toContain('404');
    expect(r.error).toContain('no-such-model');
  });
});
