// A model provider that goes down under a running run: the run waits it out
// (status, details and AgentStatus say `waiting_for_model`), goes on when the
// provider is back and pays exactly what a run without the outage pays; a
// Stop ends a waiting run at once; past its allowance the run fails with the
// last error, and that run can be resumed once the provider is back. The
// outage is the scripted provider's `down` fault (every request of the run
// reset until the test clears it), so each test waits for events, not time.
import { describe, expect, it } from 'vitest';
import type { RunStatusView } from '../common/contract.js';
import { cancelSignal, statusQuery } from '../common/run-messages.js';
import { AGENT_STATUS } from '../common/search-attributes.js';
import { addFault, clearFaults, marker, providerRequests, useHarness, waitFor } from './helpers/harness.js';

const h = useHarness();

/** The activity's own 6 attempts take ~31 s before the run starts waiting: each test is allowed minutes. */
const OUTAGE_TEST_MS = 240_000;

async function waitingStatus(handle: { query: (q: typeof statusQuery) => Promise<RunStatusView> }): Promise<RunStatusView> {
  return waitFor('the run to say it waits for the model', async () => {
    const s = await handle.query(statusQuery);
    return s.agentStatus === 'waiting_for_model' ? s : null;
  }, 180_000);
}

describe('a model provider outage', () => {
  it('is waited out: the status says so with the last error and the next try; the run completes and pays as without it', async () => {
    const m = marker();
    const task = `Which file mentions a timeout? ${m}`;
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 1 }, fault: { type: 'down', forMs: 3_600_000 }, times: 1 });
    const handle = await h.start({ task, model: 'plan' });
    const s = await waitingStatus(handle);
    expect(s.status).toBe('running');
    expect(s.modelOutage).toMatchObject({ errorType: 'ProviderUnreachable', tries: 0 });
    expect(s.modelOutage?.lastError).toContain('could not reach the model provider');
    expect(Date.parse(s.modelOutage?.nextTryAt ?? '')).toBeGreaterThan(Date.parse(s.modelOutage?.since ?? ''));
    // Six hours by default, from when the activity's retries ran out.
    expect(Date.parse(s.modelOutage?.giveUpAt ?? '') - Date.parse(s.modelOutage?.since ?? '')).toBe(6 * 3600_000);
    expect((await handle.describe()).typedSearchAttributes.get(AGENT_STATUS)).toBe('waiting_for_model');
    // A second try fails too while the provider stays down: the status counts it.
    await waitFor('a second failed try', async () => ((await handle.query(statusQuery)).modelOutage?.tries ?? 0) >= 1, 180_000);

    await clearFaults(h.providerUrl, m);
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 2 });
    const after = await handle.query(statusQuery);
    expect(after.agentStatus).toBe('completed');
    expect(after.modelOutage).toBeUndefined();
    expect((await handle.describe()).typedSearchAttributes.get(AGENT_STATUS)).toBe('completed');
    const lines = h.events(handle.workflowId).map((l) => l.type);
    expect(lines.filter((t) => t === 'model_waiting').length).toBeGreaterThanOrEqual(2);
    expect(lines.filter((t) => t === 'model_recovered')).toHaveLength(1);
    // Every refused request is free: the same money as the same run without the outage.
    const clean = await h.run({ task: `Which file mentions a timeout? ${m.replace('m-', 'c-')}`, model: 'plan' });
    expect(r.costUsd).toBeCloseTo(clean.costUsd, 12);
    const log = await providerRequests(h.providerUrl, m);
    expect(log.filter((l) => l.turn === 1 && l.status === 200)).toHaveLength(1);
    expect(log.filter((l) => l.turn === 1 && l.status === 0).length).toBeGreaterThanOrEqual(7);
  }, OUTAGE_TEST_MS);

  it('a Stop while waiting ends the run at once, interrupted, and no call follows', async () => {
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m }, fault: { type: 'down', forMs: 3_600_000 }, times: 1 });
    const handle = await h.start({ task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    await waitingStatus(handle);
    const before = (await providerRequests(h.providerUrl, m)).length;
    await handle.signal(cancelSignal, { reason: 'provider is down, stop' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'provider is down, stop' }, turns: 0 });
    expect((await handle.describe()).typedSearchAttributes.get(AGENT_STATUS)).toBe('interrupted');
    expect(await providerRequests(h.providerUrl, m)).toHaveLength(before);
    await clearFaults(h.providerUrl, m);
  }, OUTAGE_TEST_MS);

  it('past its allowance the run fails with the last error, and a resume continues it once the provider is back', async () => {
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 1 }, fault: { type: 'down', forMs: 3_600_000, status: 503 }, times: 1 });
    const handle = await h.start({ task: `Which file mentions a timeout? ${m}`, model: 'plan', modelOutageMs: 1000 });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'failed', turns: 1, errorType: 'ProviderUnavailable' });
    expect(r.error).toContain('the model provider answered 503');
    expect(r.error).toContain('modelOutageMs');

    await clearFaults(h.providerUrl, m);
    const resumed = await h.start({ task: 'resume', resumeFrom: handle.workflowId });
    expect(await resumed.result()).toMatchObject({ status: 'completed', turns: 3, toolRuns: 2 });
  }, OUTAGE_TEST_MS);
});
