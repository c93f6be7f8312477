// Continue-as-new on the production server: a long run continues into new
// executions (at the harness's own history-size threshold; the server's
// suggestion comes at its default 4,096 events, as in production) and ends as
// one run — one trace, its turns in order, the cost of them all — the same
// result as a run that never continued. The history service is killed
// between executions for good measure.
import { describe, expect, it } from 'vitest';
import { statusQuery, transcriptQuery } from '../../common/run-messages.js';
import { useHarness, waitFor } from '../helpers/harness.js';
import { killService, startService } from './faults.js';

const h = useHarness();

async function executions(workflowId: string) {
  const runs = [];
  for await (const w of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(w);
  return runs;
}

describe('continue-as-new on the cluster', () => {
  it('a 30-turn run continues several times and ends as one run, through a history crash', async () => {
    const handle = await h.start({ task: 'Keep listing files.', model: 'runaway', limits: { maxTurns: 30, maxBudgetUsd: null }, continueAsNewAtHistoryBytes: 16 * 1024 });
    await waitFor('the first continue-as-new', () => h.events(handle.workflowId).some((l) => l.type === 'continued_as_new'));
    await killService('history');
    await startService('history');
    const r = await handle.result();
    expect(r).toMatchObject({ runId: handle.workflowId, status: 'max_turns_exceeded', turns: 30, toolRuns: 1 });

    const trace = h.events(handle.workflowId);
    const continued = trace.filter((l) => l.type === 'continued_as_new').length;
    expect(continued).toBeGreaterThanOrEqual(2);
    // Visibility is written asynchronously: wait for every execution's row.
    const runs = await waitFor('every execution listed', async () => {
      const rows = await executions(handle.workflowId);
      return rows.length === continued + 1 && rows.every((w) => w.status.name !== 'RUNNING') ? rows : null;
    });
    expect(runs.filter((w) => w.status.name === 'CONTINUED_AS_NEW')).toHaveLength(continued);
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i + 1));
    expect(trace.filter((l) => l.type === 'run_started')).toHaveLength(1);
    expect(trace.filter((l) => l.type === 'run_stopped')).toHaveLength(1);
    const turns = trace.filter((l) => l.type === 'turn');
    expect(turns.map((l) => l.turn)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(turns.reduce((a, l) => a + Number(l.turnCostUsd), 0)).toBeCloseTo(r.costUsd, 12);
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'max_turns_exceeded', turns: 30 });
    expect(await handle.query(transcriptQuery)).toHaveLength(1 + 30 * 2);
  });

  it('continuing after every turn gives the same result as not continuing', async () => {
    const plain = await h.run({ task: 'Which file mentions a timeout?', model: 'plan' });
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', continueAsNewAtHistoryBytes: 1024 });
    const r = await handle.result();
    await waitFor('three executions listed', async () => (await executions(handle.workflowId)).length === 3);
    // The same run but for where it ran: its ids.
    expect({ ...r, runId: '', workflowId: '' }).toEqual({ ...plain, runId: '', workflowId: '' });
  });
});
