// A Stop that stops: taken before the run's result is recorded, it ends the
// run interrupted/cancelled and is on record; after it, no call is parked,
// counted or started; it never turns a run failed. Each case builds the
// moment it names from real events (history, trace lines), never from timing.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approveSignal, cancelSignal, transcriptQuery } from '../common/run-messages.js';
import type { ChatMessage } from '../common/contract.js';
import { addFault, freshWorkspace, marker, providerRequests, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
const task = 'Which file mentions a timeout?';
const exists = (ws: string, file: string) => existsSync(join(h.workspaceRoot, ws, file));
const resultOf = (t: ChatMessage[], callId: string) => t.find((m) => m.role === 'tool' && m.tool_call_id === callId);
const waitForAbort = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

describe('a Stop that reaches the run with the last model reply', () => {
  it('the reply and the Stop in one activation: interrupted/cancelled, the answer kept, the Stop on record', async () => {
    // The last reply is recorded while no worker takes workflow tasks (an
    // activities-only worker runs the model call's retry); the Stop is sent
    // after it, so the next workflow task brings both at once.
    const first = await h.startWorker();
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 2 }, fault: { type: 'delay', ms: 15_000 }, times: 1 });
    const handle = await h.start({ task: `${task} ${m}`, model: 'plan' });
    await waitFor('the last model request, held', async () => (await providerRequests(h.providerUrl, m)).some((r) => r.turn === 2 && r.pending));
    await first.shutdown();
    const activities = await h.startWorker({ activitiesOnly: true });
    let second: Awaited<ReturnType<typeof h.startWorker>> | null = null;
    try {
      await waitFor('the last reply recorded, no task processing it yet', async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        return events.filter((e) => e.activityTaskCompletedEventAttributes).length === 3 ? events : null;
      });
      await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      second = await h.startWorker();
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' }, output: null, turns: 3 });
      // What the model said meanwhile is kept (and paid for).
      expect((await handle.query(transcriptQuery)).at(-1)).toMatchObject({ role: 'assistant', content: expect.stringMatching(/errors\.log mentions a timeout/) });
      const events = h.events(handle.workflowId);
      expect(events.find((l) => l.type === 'stop_prevailed')).toMatchObject({ over: 'completed' });
      expect(events.at(-1)).toMatchObject({ type: 'run_stopped', status: 'interrupted', reason: 'user pressed Stop' });
      expect(events.some((l) => l.type === 'signal_ignored')).toBe(false);
    } finally {
      await activities.shutdown();
      await second?.shutdown();
    }
  });
});

describe('after a Stop nothing new is parked, counted or started', () => {
  it('a write that lands after the Stop: the next call of the same reply is not put to a person and never runs', async () => {
    let reached!: () => void;
    const atHook = new Promise<void>((r) => (reached = r));
    const worker = await h.startWorker({
      taskQueue: `${h.taskQueue}-write-lands`,
      writeHooks: { beforeCommit: async (signal) => (reached(), await waitForAbort(signal)) },
    });
    try {
      const ws = freshWorkspace();
      const calls = [[{ name: 'delete_file', args: { path: 'access.log' } }, { name: 'delete_file', args: { path: 'notes.txt' } }]];
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue: worker.taskQueue,
        workflowId: `write-lands-${ws}`,
        args: [{ task: `Clean up. script:${JSON.stringify(calls)}`, model: 'script', workspace: ws }],
      });
      await waitForApproval(handle, 's0_0');
      await handle.signal(approveSignal, { callId: 's0_0', by: 'alice' });
      await atHook;
      await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' }, toolRuns: 1 });
      // The approved write landed and says so; the second was never asked for nor run.
      expect(exists(ws, 'access.log')).toBe(false);
      expect(exists(ws, 'notes.txt')).toBe(true);
      const transcript = await handle.query(transcriptQuery);
      expect(resultOf(transcript, 's0_0')?.content).toBe('deleted access.log');
      // Still pending: a resume asks a person about it, as it would have.
      expect(resultOf(transcript, 's0_1')).toBeUndefined();
      const events = h.events(handle.workflowId);
      expect(events.filter((l) => l.type === 'approval_required').map((l) => l.callId)).toEqual(['s0_0']);
      expect(events.some((l) => l.callId === 's0_1')).toBe(false);
      const history = (await handle.fetchHistory()).events ?? [];
      expect(history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool')).toHaveLength(1);
    } finally {
      await worker.shutdown();
    }
  });

  it.each([
    ['cancel, then approve', ['cancel', 'approve']],
    ['approve, then cancel', ['approve', 'cancel']],
  ] as const)('a Stop and an approval reaching a parked run together (%s): the call never runs and no decision is recorded', async (_label, order) => {
    const first = await h.startWorker();
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    await first.shutdown();
    for (const s of order) {
      if (s === 'cancel') await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      else await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    }
    const second = await h.startWorker();
    try {
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' }, toolRuns: 1 });
      expect(exists(ws, 'access.log')).toBe(true);
      // No result for c2: it was never run, and a resume asks about it again.
      expect(resultOf(await handle.query(transcriptQuery), 'c2')).toBeUndefined();
      const events = h.events(handle.workflowId);
      expect(events.some((l) => l.type === 'approval_decided')).toBe(false);
      expect(events.find((l) => l.type === 'signal_ignored')).toMatchObject({ signal: 'approve', callId: 'c2', reason: expect.stringMatching(/the run is stopping/) });
    } finally {
      await second.shutdown();
    }
  });
});

describe('a Stop never turns a run failed', () => {
  it('toolErrors "fatal" and a Stop during a sub-agent: interrupted/cancelled, resumable', async () => {
    const worker = await h.startWorker();
    try {
      const m = marker();
      await addFault(h.providerUrl, { match: { model: 'research', turn: 1, taskIncludes: 'what does it say?' }, fault: { type: 'delay', ms: 5000 }, times: 1 });
      const handle = await h.start({ task: `Find out which file mentions a timeout. ${m}`, model: 'research', tools: ['research'], toolErrors: 'fatal' });
      const childId = `${handle.workflowId}/m1/r1/research`;
      await waitFor('the child to finish its first turn', () => h.trace(childId).some((l) => l.type === 'tool_result'));
      await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' }, error: null });
      expect(resultOf(await handle.query(transcriptQuery), 'r1')?.content).toMatch(/stopped \(user pressed Stop\) while this research call was running/);
    } finally {
      await worker.shutdown();
    }
  });
});
