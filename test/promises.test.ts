// The promises that broke under adversarial interleavings (issue 7), each
// pinned by the test that first showed it: a decision is final, a reused
// workflow id never inherits another run's effects, the budget pays for the
// whole tree, a run keeps the configuration it started with, a Stop during a
// write is recorded truthfully, and arguments are checked before anyone is
// asked.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { traceChains } from '../node/trace-format.js';
import { latestChain } from '../client/run-history.js';
import { approveSignal, cancelSignal, decideUpdate, rejectSignal, transcriptQuery } from '../common/run-messages.js';
import type { ChatMessage } from '../common/contract.js';
import { addFault, freshWorkspace, marker, providerRequests, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
const task = 'Which file mentions a timeout?';
const resultOf = (t: ChatMessage[], callId: string) => t.find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content;
const exists = (ws: string, file: string) => existsSync(join(h.workspaceRoot, ws, file));

describe('a decision is final', () => {
  it('a decision and the reply that proposes its call, reaching the run in one activation, count: the decision is taken, as it would be in two', async () => {
    // The turn-2 reply is recorded while no worker takes workflow tasks (an activities-only worker
    // runs the model call's retry), and the decision is sent after it: the next worker gets both in
    // one activation. Signals are applied after the activation's other jobs, so the decision meets the
    // parked call — the state a worker that had run ahead of history (its cache filled by a query
    // answered from a replay) would be in when the signal alone reached it.
    const first = await h.startWorker();
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 1 }, fault: { type: 'delay', ms: 15_000 }, times: 1 });
    const ws = freshWorkspace();
    const handle = await h.start({ task: `${task} ${m}`, model: 'destructive', workspace: ws });
    await waitFor('the turn-2 model request, held', async () => (await providerRequests(h.providerUrl, m)).some((r) => r.turn === 1 && r.pending));
    // No grace: the held call is cancelled with the worker, and its retry runs on a worker without workflows.
    await first.shutdown();
    const activities = await h.startWorker({ activitiesOnly: true });
    let second: Awaited<ReturnType<typeof h.startWorker>> | null = null;
    try {
      const history = await waitFor('the turn-2 reply recorded, no task processing it yet', async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        return events.filter((e) => e.activityTaskCompletedEventAttributes).length === 2 ? events : null;
      });
      const replyAt = Number(history.filter((e) => e.activityTaskCompletedEventAttributes)[1].eventId);
      expect(history.some((e) => e.workflowTaskCompletedEventAttributes && Number(e.eventId) > replyAt)).toBe(false);
      await handle.signal(approveSignal, { callId: 'c2', by: 'early' });
      second = await h.startWorker();
      await waitFor('the run to end', async () => ((await handle.describe()).status.name !== 'RUNNING' ? true : null), 20_000).catch(async (err: unknown) => {
        const evs = (await handle.fetchHistory()).events ?? [];
        throw new Error(`${String(err)}: trace ${JSON.stringify(h.events(handle.workflowId).map((l) => [l.type, l.callId, l.reason]))}; history tail ${evs.slice(-10).map((e) => e.eventType).join(',')}`);
      });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
      const events = h.events(handle.workflowId);
      expect(events.filter((l) => l.type === 'approval_decided').map((l) => [l.callId, l.decision, l.by])).toEqual([['c2', 'approve', 'early']]);
      expect(events.filter((l) => l.type === 'signal_ignored')).toEqual([]);
      expect(exists(ws, 'access.log')).toBe(false);
    } finally {
      await activities.shutdown();
      await second?.shutdown();
    }
  });

  it('a decision for a call not proposed yet is refused, however soon the call comes: never decided blind', async () => {
    const worker = await h.startWorker();
    const m = marker();
    // The turn-2 reply (which proposes c2) is held while the early approval arrives.
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 1 }, fault: { type: 'delay', ms: 3000 }, times: 1 });
    const ws = freshWorkspace();
    const handle = await h.start({ task: `${task} ${m}`, model: 'destructive', workspace: ws });
    try {
      await waitFor('the turn-2 model request, held', async () => (await providerRequests(h.providerUrl, m)).some((r) => r.turn === 1 && r.pending));
      await handle.signal(approveSignal, { callId: 'c2', by: 'early-bird' });
      await waitForApproval(handle, 'c2');
      const ignored = await waitFor('the early approval refused', () => h.events(handle.workflowId).find((l) => l.type === 'signal_ignored'));
      expect(ignored).toMatchObject({ callId: 'c2', reason: expect.stringMatching(/no call was awaiting a decision when it arrived/) });
      expect(h.events(handle.workflowId).filter((l) => l.type === 'approval_decided')).toEqual([]);
      expect(exists(ws, 'access.log')).toBe(true);
      await handle.signal(rejectSignal, { callId: 'c2', by: 'bob' });
      expect((await handle.result()).output).toBe('I did not delete anything: you declined the deletion.');
    } finally {
      await worker.shutdown();
    }
  });

  it('reject then approve, sent while the worker is down, reach one activation: the reject holds', async () => {
    const first = await h.startWorker();
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    await first.shutdown();
    await handle.signal(rejectSignal, { callId: 'c2', reason: 'needed for the audit', by: 'bob' });
    await handle.signal(approveSignal, { callId: 'c2', by: 'mallory' });
    const second = await h.startWorker();
    try {
      const r = await handle.result();
      expect(r.output).toBe('I did not delete anything: you declined the deletion.');
      expect(exists(ws, 'access.log')).toBe(true);
      const events = h.events(handle.workflowId);
      expect(events.filter((l) => l.type === 'approval_decided')).toEqual([expect.objectContaining({ decision: 'reject', by: 'bob' })]);
      expect(events.filter((l) => l.type === 'signal_ignored')).toEqual([
        expect.objectContaining({ signal: 'approve', callId: 'c2', reason: expect.stringMatching(/^already decided/) }),
      ]);
    } finally {
      await second.shutdown();
    }
  });

  it('two decide updates in one activation: exactly one is applied, the other refused as already decided', async () => {
    const first = await h.startWorker();
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    // Built now, polling later: the updates wait only as long as the worker's start.
    const second = await h.prepareWorker();
    await first.shutdown();
    // Both wait for a worker: they reach the run together when one comes back.
    const approve = handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'alice' }] });
    const reject = handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'reject', by: 'bob' }] });
    const settled = Promise.allSettled([approve, reject]);
    second.run();
    try {
      const [a, b] = await settled;
      const applied = [a, b].filter((x) => x.status === 'fulfilled');
      const refused = [a, b].filter((x): x is PromiseRejectedResult => x.status === 'rejected');
      expect(applied, `refused: ${refused.map((x) => `${String(x.reason)} / ${String((x.reason as { cause?: unknown }).cause)}`).join('; ')}`).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0].reason).toBeInstanceOf(WorkflowUpdateFailedError);
      expect(String((refused[0].reason as WorkflowUpdateFailedError).cause?.message)).toMatch(/already decided/);
      const r = await handle.result();
      const decided = h.events(handle.workflowId).filter((l) => l.type === 'approval_decided');
      expect(decided).toHaveLength(1);
      // The file is gone exactly when the one applied decision was an approval.
      expect(exists(ws, 'access.log')).toBe(decided[0].decision !== 'approve');
      expect(r.status).toBe('completed');
    } finally {
      await second.shutdown();
    }
  });
});

describe('a workflow id used again', () => {
  it('does not inherit the earlier run effects: the second approved delete really deletes, and both traces stay', async () => {
    const worker = await h.startWorker();
    try {
      const id = `reused-${freshWorkspace()}`;
      const wsA = freshWorkspace();
      const wsB = freshWorkspace();
      const runOnce = async (ws: string) => {
        const handle = await h.start({ task, model: 'destructive', workspace: ws }, id);
        await waitForApproval(handle, 'c2');
        await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
        return { handle, result: (await handle.result()) };
      };
      const one = await runOnce(wsA);
      expect(exists(wsA, 'access.log')).toBe(false);
      const two = await runOnce(wsB);
      expect(resultOf(await two.handle.query(transcriptQuery), 'c2')).toBe('deleted access.log');
      // The tool said so, and it is true.
      expect(exists(wsB, 'access.log')).toBe(false);
      const chains = traceChains(h.traceDir, id);
      expect(chains).toEqual([one.handle.firstExecutionRunId, two.handle.firstExecutionRunId].sort());
      for (const chain of chains) {
        const lines = h.trace(id, chain).filter((l) => l.step === undefined);
        expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
        expect(lines.at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed' });
      }
      // The latest run, as the server orders them, is what `trace <id>` shows.
      const latest = await latestChain(h.client, id);
      expect(latest).toBe(two.handle.firstExecutionRunId);
      expect(h.trace(id, latest).find((l) => l.type === 'run_started')?.chainId).toBe(latest);
    } finally {
      await worker.shutdown();
    }
  });
});

describe('the budget pays for the whole tree', () => {
  it('a research child gets at most what the parent has left, and the parent stops as soon as it returns', async () => {
    const worker = await h.startWorker();
    try {
      const budget = 0.002;
      const handle = await h.start({ task: 'Find out which file mentions a timeout.', model: 'research', tools: ['research'], limits: { maxBudgetUsd: budget } });
      const r = await handle.result();
      const childId = `${handle.workflowId}/m1/r1/research`;
      const child = await h.client.workflow.getHandle<typeof agentRun>(childId).result();
      const parentTurns = h.events(handle.workflowId).filter((l) => l.type === 'turn');
      const childTurns = h.events(childId).filter((l) => l.type === 'turn');
      const childBudget = Number(h.events(childId).find((l) => l.type === 'run_started')?.maxBudgetUsd);
      expect(childBudget).toBeCloseTo(budget - Number(parentTurns[0].turnCostUsd), 12);
      expect(r.status).toBe('budget_exceeded');
      // Stopped the moment the child returned: no second parent turn was bought.
      expect(r.turns).toBe(1);
      expect(r.costUsd).toBeCloseTo(Number(parentTurns[0].turnCostUsd) + child.costUsd, 12);
      const biggestTurn = Math.max(...[...parentTurns, ...childTurns].map((l) => Number(l.turnCostUsd)));
      expect(r.costUsd - budget).toBeLessThanOrEqual(biggestTurn);
      // The transcript keeps the protocol: the research call has its one result.
      expect(resultOf(await handle.query(transcriptQuery), 'r1')).toContain('errors.log');
    } finally {
      await worker.shutdown();
    }
  });

  it('no child starts when the budget is already spent by the turn that asked for it', async () => {
    const worker = await h.startWorker();
    try {
      const handle = await h.start({ task: 'Find out which file mentions a timeout.', model: 'research', tools: ['research'], limits: { maxBudgetUsd: 0.0001 } });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'budget_exceeded', turns: 1, children: { runs: 0 } });
      expect(resultOf(await handle.query(transcriptQuery), 'r1')).toMatch(/did not run this research call because the run's budget is spent/);
      expect(h.events(handle.workflowId).some((l) => l.type === 'tool_start')).toBe(false);
    } finally {
      await worker.shutdown();
    }
  });
});

describe('a run keeps the configuration it started with', () => {
  it('a worker with other defaults takes over a parked run: the run keeps its own turn cap', { timeout: 240_000 }, async () => {
    const first = await h.startWorker({ runDefaults: { maxTurns: 4 } });
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    await first.shutdown();
    // A deploy that lowers the default cap below what this run needs.
    const second = await h.startWorker({ runDefaults: { maxTurns: 2 } });
    try {
      await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
      // Waited for as an event, so a hang names its step.
      await waitFor('the parked run to finish on the new worker', async () => (await handle.describe()).status.name !== 'RUNNING');
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', turns: 3 });
      expect(h.events(handle.workflowId)[0]).toMatchObject({ type: 'run_started', maxTurns: 4 });
      // A new run on the new worker gets the new default.
      const fresh = await h.start({ task, model: 'runaway' });
      await waitFor('a fresh run to finish on the new worker', async () => (await fresh.describe()).status.name !== 'RUNNING');
      expect(await fresh.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 2 });
    } finally {
      await second.shutdown();
    }
  });

  it('continue-as-new carries the resolved configuration; only the first execution resolves it', async () => {
    const worker = await h.startWorker({ runDefaults: { maxTurns: 4 } });
    try {
      const handle = await h.start({ task, model: 'runaway', continueAsNewAtHistoryBytes: 1 });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 4 });
      const latest = await handle.fetchHistory();
      const started = latest.events?.[0]?.workflowExecutionStartedEventAttributes;
      expect(started?.continuedExecutionRunId).toBeTruthy();
      const carried = await h.client.options.loadedDataConverter.payloadConverter.fromPayload<{ cfg?: { maxTurns: number } }>(started!.input!.payloads![1]);
      expect(carried.cfg?.maxTurns).toBe(4);
      // No local activity marker in a continued execution: nothing is re-derived.
      expect(latest.events?.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toBe(false);
    } finally {
      await worker.shutdown();
    }
  });
});

describe('a Stop during a write', () => {
  const waitForAbort = (signal: AbortSignal) =>
    new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

  /**
   * An approved delete held at one of its write hooks until the Stop reaches
   * it: the run's result, its workspace and its handle, for the checks.
   */
  async function stopDuringWrite(point: 'beforeAct' | 'beforeCommit') {
    let reached!: () => void;
    const atHook = new Promise<void>((r) => (reached = r));
    const worker = await h.startWorker({
      taskQueue: `${h.taskQueue}-${point}`,
      writeHooks: { [point]: async (signal: AbortSignal) => (reached(), await waitForAbort(signal)) },
    });
    try {
      const ws = freshWorkspace();
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: worker.taskQueue, workflowId: `stop-${point}-${ws}`, args: [{ task, model: 'destructive', workspace: ws }] });
      await waitForApproval(handle, 'c2');
      await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
      await atHook;
      await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      const result = await handle.result();
      return { result, ws, handle, transcript: await handle.query(transcriptQuery) };
    } finally {
      await worker.shutdown();
    }
  }

  it('before the write acts: nothing changes and the transcript says the call was stopped', async () => {
    const { result: r, ws, handle, transcript } = await stopDuringWrite('beforeAct');
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' } });
    expect(exists(ws, 'access.log')).toBe(true);
    expect(resultOf(transcript, 'c2')).toMatch(/stopped \(user pressed Stop\) while this delete_file call was running/);
    const events = h.events(handle.workflowId);
    expect(events.find((l) => l.type === 'tool_result' && l.callId === 'c2')).toMatchObject({ ok: false, stopped: true });
  });

  it('after the write committed: the run waits for it, and the transcript records that it happened', async () => {
    const { result: r, ws, handle, transcript } = await stopDuringWrite('beforeCommit');
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled' }, toolRuns: 2 });
    expect(exists(ws, 'access.log')).toBe(false);
    expect(resultOf(transcript, 'c2')).toBe('deleted access.log');
    const events = h.events(handle.workflowId);
    const result = events.findIndex((l) => l.type === 'tool_result' && l.callId === 'c2');
    expect(events[result]).toMatchObject({ ok: true });
    expect(result).toBeLessThan(events.findIndex((l) => l.type === 'run_stopped'));
  });
});

describe('arguments are checked before anyone is asked', () => {
  it('a delete whose arguments fail the schema is never put to a person', async () => {
    const worker = await h.startWorker();
    try {
      const ws = freshWorkspace();
      const handle = await h.start({ task: 'Delete something.', model: 'delete_bad_args', workspace: ws });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 0 });
      expect(r.output).toMatch(/invalid arguments for delete_file: \/path: must be of type string, got \w+/);
      // Nobody was asked and no tool ran (the workspace was never even opened).
      expect(h.trace(handle.workflowId).map((l) => l.type)).not.toEqual(expect.arrayContaining(['approval_required']));
      expect(h.trace(handle.workflowId).some((l) => l.type === 'tool_start' || l.type === 'tool_exec')).toBe(false);
    } finally {
      await worker.shutdown();
    }
  });

  it('research with {} starts no child: the model reads the schema error', async () => {
    const worker = await h.startWorker();
    try {
      const handle = await h.start({ task: 'Research.', model: 'research_bad_args', tools: ['research'] });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 0, children: { runs: 0 } });
      expect(r.output).toMatch(/invalid arguments for research: arguments: is missing required property "question"/);
      await waitFor('the trace to close', () => h.events(handle.workflowId).some((l) => l.type === 'run_stopped'));
      expect(h.events(handle.workflowId).some((l) => l.type === 'tool_start')).toBe(false);
    } finally {
      await worker.shutdown();
    }
  });
});
