// Long runs continue as new before history grows too big. The run id, the
// trace, the cost, the cache and the queries carry on across executions.
import { describe, expect, it } from 'vitest';
import { transcriptQuery, statusQuery } from '../common/run-messages.js';
import { useHarness } from './helpers/harness.js';

const h = useHarness();

async function executions(workflowId: string) {
  const runs = [];
  for await (const w of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(w);
  return runs;
}

describe('continue-as-new', () => {
  it('a 60-turn run crosses the server suggestion (150 events here) and continues with everything intact', async () => {
    const handle = await h.start({ task: 'Keep listing files.', model: 'runaway', limits: { maxTurns: 60, maxBudgetUsd: null } });
    const r = await handle.result();
    expect(r).toMatchObject({ runId: handle.workflowId, status: 'max_turns_exceeded', turns: 60 });
    // The read-only cache crossed executions: list_files ran once in 60 turns.
    expect(r.toolRuns).toBe(1);
    expect(r.promptTokensPerTurn).toHaveLength(60);

    const runs = await executions(handle.workflowId);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.filter((w) => w.status.name === 'CONTINUED_AS_NEW')).toHaveLength(runs.length - 1);
    for (const w of runs) expect(w.historyLength).toBeLessThan(250);

    const trace = h.events(handle.workflowId);
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i + 1));
    expect(trace.filter((l) => l.type === 'run_started')).toHaveLength(1);
    expect(trace.filter((l) => l.type === 'run_stopped')).toHaveLength(1);
    expect(trace.filter((l) => l.type === 'continued_as_new')).toHaveLength(runs.length - 1);
    const turns = trace.filter((l) => l.type === 'turn');
    expect(turns.map((l) => l.turn)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    // Total cost is the sum of its turns, across executions.
    expect(turns.reduce((a, l) => a + Number(l.turnCostUsd), 0)).toBeCloseTo(r.costUsd, 12);

    expect(await handle.query(statusQuery)).toMatchObject({ status: 'max_turns_exceeded', turns: 60 });
    expect(await handle.query(transcriptQuery)).toHaveLength(1 + 60 * 2);
  });

  it('continuing after every turn (a tiny history threshold) gives the same result as not continuing', async () => {
    const plain = await h.run({ task: 'Which file mentions a timeout?', model: 'plan' });
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', continueAsNewAtHistoryBytes: 1024 });
    const r = await handle.result();
    expect((await executions(handle.workflowId)).length).toBe(3);
    // The same run but for where it ran: its ids.
    expect({ ...r, runId: '', workflowId: '' }).toEqual({ ...plain, runId: '', workflowId: '' });
  });
});
