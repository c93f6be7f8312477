// Attacks on the stream's read surface (issue 34): the library's poll update
// and the streamItems query are open to anyone who reaches Temporal, and
// AgentClient's events() takes an offset from its caller. Hostile offsets
// (negative, not whole, not a number, huge) get a clear refusal naming the
// field, at once; no answer is unbounded; a reader far behind on a long run
// reads it all in bounded pages and time; an update sent the moment a run
// starts gets the run's own answer, never "No registered handler".
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../../client/agent-client.js';
import { StreamOffsetError } from '../../client/run-events.js';
import { cancelSignal, decideUpdate, raiseBudgetUpdate, reconcileUpdate, steerUpdate, streamItemsQuery } from '../../common/run-messages.js';
import { STREAM_PAGE_ITEMS, isGap, type RunEventItem } from '../../common/stream-items.js';
import { freshWorkspace, useHarness, waitForApproval } from '../helpers/harness.js';
import { admitted } from '../helpers/admitted-update.js';

const h = useHarness();
const agents = () => new AgentClient({ client: h.client, taskQueue: h.taskQueue });

const POLL = '__temporal_workflow_stream_poll';

/** Rejects with a timeout's error when `p` has not settled in `ms`: a hostile poll that parks is a failure, not a hang. */
function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await within(15_000, p);
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : err;
    return cause instanceof Error ? cause.message : String(cause);
  }
  return 'accepted';
}

describe('hostile offsets on the stream', () => {
  it('a poll from an offset that is not a whole number of 0 or more is refused at once, naming from_offset (one from "x" waited until the run closed)', async () => {
    const handle = await h.start({ task: 'Delete the old logs.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    for (const from of ['x', -1, 1.5, null, 1e300]) {
      const answer = await refusal(handle.executeUpdate(POLL, { args: [{ topics: ['events'], from_offset: from }] }));
      expect(answer, `from_offset ${String(from)}`).toMatch(/from_offset must be a whole number of 0 or more/);
    }
    expect(await refusal(handle.executeUpdate(POLL, { args: [{ topics: 'events', from_offset: 0 }] }))).toMatch(/topics must be an array/);
    // The run is unharmed: it still answers and stops.
    await handle.signal(cancelSignal, { reason: 'test over' });
    expect((await handle.result()).status).toBe('interrupted');
  });

  it('streamItems refuses offsets and page sizes that are not whole numbers, and answers one bounded page however much is asked', async () => {
    const handle = await h.start({ task: 'Keep listing.', model: 'runaway', limits: { maxTurns: 8 }, workspace: freshWorkspace() });
    await handle.result();
    for (const from of [-1, 1.5, 'x']) {
      await expect(handle.query(streamItemsQuery, from as number), `fromOffset ${String(from)}`).rejects.toThrow(/fromOffset must be a whole number of 0 or more/);
    }
    await expect(handle.query(streamItemsQuery, 0, 0)).rejects.toThrow(/maxItems must be a whole number of 1 or more/);
    const page = await handle.query(streamItemsQuery, 0, 3);
    expect(page.items.map((i) => i.offset)).toEqual([0, 1, 2]);
    expect((await handle.query(streamItemsQuery, 0, 1e9)).items.length).toBeLessThanOrEqual(STREAM_PAGE_ITEMS);
    // Past the end: nothing, and where the end is.
    expect(await handle.query(streamItemsQuery, 1e12)).toMatchObject({ items: [], end: page.end });
  });

  it('events() refuses a bad offset by name before sending anything, and an offset past a closed run\'s end with StreamOffsetError', async () => {
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() });
    await handle.result();
    const run = agents().getHandle(handle.workflowId);
    const first = (from: number) => run.events(from).next();
    for (const from of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) await expect(first(from), String(from)).rejects.toThrow(/fromOffset must be a whole number of 0 or more/);
    await expect(first(1e12)).rejects.toBeInstanceOf(StreamOffsetError);
  });

  it('a reader far behind on a long run (50 turns, continuing as new every few) reads every item in bounded time, by pages', { timeout: 300_000 }, async () => {
    const handle = await h.start({ task: 'Keep listing.', model: 'runaway', limits: { maxTurns: 50, maxBudgetUsd: null }, continueAsNewAtHistoryBytes: 9_000, workspace: freshWorkspace() });
    await handle.result();
    const started = Date.now();
    const heapBefore = process.memoryUsage().heapUsed;
    let n = 0;
    let last: RunEventItem | undefined;
    for await (const item of agents().getHandle(handle.workflowId).events(0)) {
      expect(isGap(item)).toBe(false);
      expect(item.offset).toBe(n);
      n += 1;
      last = item;
    }
    expect(last).toMatchObject({ type: 'run_stopped' });
    expect(Date.now() - started).toBeLessThan(120_000);
    // Items are yielded as they are read, not gathered: the reader holds a page and the chain's run ids.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
    expect(n).toBeGreaterThan(100);
  });

  it('every update a caller may send, reaching the run in its first workflow task, gets the run\'s own refusal naming why, never "No registered handler for update"', { timeout: 120_000 }, async () => {
    const worker = await h.prepareWorker({ taskQueue: `first-task-attack-${freshWorkspace()}` });
    try {
      const workflowId = `first-task-attack-${freshWorkspace()}`;
      const handle = await h.client.workflow.start('agentRun', { taskQueue: worker.taskQueue, workflowId, args: [{ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() }] });
      h.replayQueue(worker.taskQueue);
      const sent = {
        decide: handle.executeUpdate(decideUpdate, { updateId: 'decide', args: [{ callId: 'c1', decision: 'approve', by: 'mallory' }] }),
        steer: handle.executeUpdate(steerUpdate, { updateId: 'steer', args: [{ message: 'hurry', by: 'mallory' }] }),
        raiseBudget: handle.executeUpdate(raiseBudgetUpdate, { updateId: 'raiseBudget', args: [{ maxBudgetUsd: 100, by: 'mallory' }] }),
        reconcile: handle.executeUpdate(reconcileUpdate, { updateId: 'reconcile', args: [{ callId: 'c1', outcome: 'retry', by: 'mallory' }] }),
      };
      const answers = Object.entries(sent).map(async ([name, p]) => [name, await refusal(p)] as const);
      // Held by the server until the worker's first poll: they arrive with the run's start.
      for (const updateId of Object.keys(sent)) {
        await admitted(h.client, workflowId, handle.firstExecutionRunId, updateId);
      }
      worker.run();
      for (const [name, answer] of await Promise.all(answers)) {
        expect(answer, name).not.toMatch(/No registered handler/);
        expect(answer, name).toMatch(/the run is starting/);
      }
      expect((await handle.result()).status).toBe('completed');
    } finally {
      // Run before shutting down (a worker never run holds its connection): nothing is left for it by then.
      worker.run();
      await worker.shutdown();
    }
  });
});
