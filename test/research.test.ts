// The research tool runs a whole child agent run; the parent pays for it.
import { describe, expect, it } from 'vitest';
import { addFault, marker, useHarness, waitFor } from './helpers/harness.js';
import { cancelSignal, statusQuery } from '../common/run-messages.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness();

describe('research scenario', () => {
  it('the child follows plan under its own limits; its answer and cost reach the parent', async () => {
    const handle = await h.start({ task: 'Find out which file mentions a timeout.', model: 'research', tools: ['research'] });
    const r = await handle.result();
    expect(r.status).toBe('completed');
    expect(r.output).toBe('From research: errors.log mentions a timeout: worker 7 timed out after 30000 ms.');
    expect(r.turns).toBe(2);
    const childId = `${handle.workflowId}/m1/r1/research`;
    const child = await h.client.workflow.getHandle<typeof agentRun>(childId).result();
    expect(child).toMatchObject({ status: 'completed', turns: 3, toolRuns: 2 });
    const ownCost = h.trace(handle.workflowId).filter((l) => l.type === 'turn').reduce((a, l) => a + Number(l.turnCostUsd), 0);
    expect(r.costUsd).toBeCloseTo(ownCost + child.costUsd, 12);
    // The children's spend, separately; the totals include it.
    expect(r.children).toEqual({ runs: 1, costUsd: child.costUsd, usage: child.usage });
    expect(r.usage.promptTokens).toBe(r.promptTokensPerTurn.reduce((x, y) => x + y, 0) + child.usage.promptTokens);
    expect((await handle.query(statusQuery)).children.runs).toBe(1);
    expect(h.trace(childId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed' });
  });

  it('one Stop cancels the child too, in the middle of its model call', async () => {
    const m = marker();
    // The child's second model call hangs for 5 s: the Stop must not wait for it.
    await addFault(h.providerUrl, { match: { model: 'research', turn: 1, taskIncludes: 'what does it say?' }, fault: { type: 'delay', ms: 5000 }, times: 1 });
    const handle = await h.start({ task: `Find out which file mentions a timeout. ${m}`, model: 'research', tools: ['research'] });
    const childId = `${handle.workflowId}/m1/r1/research`;
    await waitFor('the child to finish its first turn', () => h.trace(childId).some((l) => l.type === 'tool_result'));
    await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' } });
    const child = await h.client.workflow.getHandle<typeof agentRun>(childId).result();
    // The Stop did not wait for the held call: had the call been let finish, its reply would count as turn 2.
    expect(child).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled' }, turns: 1 });
    // The parent pays for what its child spent before the Stop.
    expect(r.costUsd).toBeCloseTo(Number(h.events(handle.workflowId).find((l) => l.type === 'turn')?.turnCostUsd) + child.costUsd, 12);
    expect(r.children).toMatchObject({ runs: 1, costUsd: child.costUsd });
  });
});
