// Steering at the moments that could break it, each built from real events
// (history, trace lines), never from timing: the message arriving in the same
// workflow task as a model reply with tool calls, a worker killed while a
// message waits, and continue-as-new between the message and its turn.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approveSignal, decideUpdate, steerSignal, transcriptQuery } from '../common/run-messages.js';
import type { ChatMessage } from '../common/contract.js';
import { addFault, freshWorkspace, marker, providerRequests, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { temporalOk } from './helpers/temporal-cli.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';
import { argsHash } from '../common/args-hash.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
const isSteer = (m: ChatMessage) => m.role === 'user' && m.content.startsWith('Message from ');

/** Every tool result follows its call with nothing else between; the steering messages appear once each. */
function expectProtocolKept(t: ChatMessage[]): void {
  let open: string[] = [];
  for (const m of t) {
    if (m.role === 'tool') {
      expect(open).toContain(m.tool_call_id);
      open = open.filter((id) => id !== m.tool_call_id);
      continue;
    }
    expect(open, `a ${m.role} message between calls and their results`).toEqual([]);
    if (m.role === 'assistant') open = (m.tool_calls ?? []).map((c) => c.id);
  }
}

describe('a steer in the same workflow task as the model reply that asks for three calls', () => {
  it('is given to the model after all three results, once; the provider never sees a broken transcript', async () => {
    // The reply is recorded while no worker takes workflow tasks (an
    // activities-only worker runs the model call's retry); the steer is
    // signalled after it, so the next workflow task brings both at once.
    const first = await h.startWorker();
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 0 }, fault: { type: 'delay', ms: 15_000 }, times: 1 });
    const handle = await h.start({ task: `Read the files. ${m}`, model: 'three_calls' });
    await waitFor('the first model request, held', async () => (await providerRequests(h.providerUrl, m)).some((r) => r.turn === 0 && r.pending));
    await first.shutdown();
    const activities = await h.startWorker({ activitiesOnly: true });
    let second: Awaited<ReturnType<typeof h.startWorker>> | null = null;
    try {
      await waitFor('the reply recorded, no task processing it yet', async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        return events.some((e) => e.activityTaskCompletedEventAttributes) ? events : null;
      });
      await temporalOk(h.address, 'workflow', 'signal', '--workflow-id', handle.workflowId, '--name', 'steer', '--input', JSON.stringify({ message: 'only the logs matter', by: 'alice' }));
      second = await h.startWorker();
      const r = await handle.result();
      expect(r.status).toBe('completed');

      // One workflow task took the reply and the signal.
      const events = (await handle.fetchHistory()).events ?? [];
      const reply = events.findIndex((e) => e.activityTaskCompletedEventAttributes);
      const signal = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'steer');
      const nextTask = events.findIndex((e, i) => i > reply && e.workflowTaskStartedEventAttributes);
      expect(reply).toBeLessThan(signal);
      expect(signal).toBeLessThan(nextTask);

      const t = await handle.query(transcriptQuery);
      expectProtocolKept(t);
      const steers = t.flatMap((x, i) => (isSteer(x) ? [i] : []));
      expect(steers).toHaveLength(1);
      const lastResult = t.findIndex((x) => x.role === 'tool' && x.tool_call_id === 'c3');
      expect(steers[0]).toBeGreaterThan(lastResult);
      expect(String(t[steers[0]].content)).toMatch(/^Message from alice .*: only the logs matter$/);
      expect(h.events(handle.workflowId).filter((l) => l.type === 'steered')).toHaveLength(1);
      expect((await providerRequests(h.providerUrl, m)).filter((q) => q.status === 400)).toEqual([]);
    } finally {
      await activities.shutdown();
      await second?.shutdown();
    }
  });
});

describe('a steer survives', () => {
  it('a worker killed while the message waits on a parked run: it is applied once, and the run keeps its required-hash setting', async () => {
    const taskQueue = `steer-crash-${randomUUID().slice(0, 8)}`;
    const common = { taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot };
    // The ops setting through the worker's real environment, resolved into the run's config at its start.
    const first = await startWorkerProcess({ ...common, env: { AGENT_REQUIRE_ARGS_HASH: 'delete_file' } });
    let second: WorkerProcess | null = null;
    try {
      const ws = freshWorkspace();
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue,
        workflowId: `steer-crash-${ws}`,
        args: [{ task: 'Free some space.', model: 'destructive', workspace: ws }],
        // A task lost with its worker is handed out again after 2 s.
        workflowTaskTimeout: '2s',
      });
      await waitForApproval(handle, 'c2');
      await handle.signal(steerSignal, { message: 'say what you deleted', by: 'bob' });
      await waitFor('the message queued', () => h.events(handle.workflowId).some((l) => l.type === 'steer_queued'));
      await first.kill();
      second = await startWorkerProcess(common);

      // The new worker has no setting of its own: the run's config still requires the hash.
      await expect(handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'alice' }] })).rejects.toMatchObject({
        cause: { message: expect.stringMatching(/^argsHash required/) },
      });
      await handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'alice', argsHash: argsHash({ path: 'access.log' }) }] });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
      expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);

      const t = await handle.query(transcriptQuery);
      expectProtocolKept(t);
      const c2 = t.findIndex((x) => x.role === 'tool' && x.tool_call_id === 'c2');
      expect(t.filter(isSteer)).toHaveLength(1);
      expect(isSteer(t[c2 + 1])).toBe(true);
      await waitFor('run_stopped in the trace', () => h.events(handle.workflowId).some((l) => l.type === 'run_stopped'));
      const events = h.events(handle.workflowId);
      expect(events.map((l) => l.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((l) => l.type === 'steer_queued')).toHaveLength(1);
      expect(events.filter((l) => l.type === 'steered')).toEqual([expect.objectContaining({ by: 'bob', turn: 2 })]);
    } finally {
      await first.kill();
      await second?.kill();
    }
  });

  it('continue-as-new between the message and its turn: carried, applied once in the next execution', async () => {
    const worker = await h.startWorker();
    try {
      const ws = freshWorkspace();
      // Continues as new at every turn boundary past the first turn of an execution.
      const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: ws, continueAsNewAtHistoryBytes: 1024 });
      await waitForApproval(handle, 'c2');
      await temporalOk(h.address, 'workflow', 'signal', '--workflow-id', handle.workflowId, '--name', 'steer', '--input', JSON.stringify({ message: 'say what you deleted', by: 'bob' }));
      await waitFor('the message queued', () => h.events(handle.workflowId).some((l) => l.type === 'steer_queued'));
      await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
      const r = await handle.result();
      expect(r.status).toBe('completed');
      const events = h.events(handle.workflowId);
      const at = (type: string) => events.findIndex((l) => l.type === type && (type !== 'continued_as_new' || l.seq > events.find((x) => x.type === 'steer_queued')!.seq));
      expect(at('steer_queued')).toBeLessThan(at('continued_as_new'));
      expect(at('continued_as_new')).toBeLessThan(at('steered'));
      expect(events.filter((l) => l.type === 'steered')).toHaveLength(1);
      const t = await handle.query(transcriptQuery);
      expectProtocolKept(t);
      expect(t.filter(isSteer)).toHaveLength(1);
      expect(isSteer(t[t.findIndex((x) => x.role === 'tool' && x.tool_call_id === 'c2') + 1])).toBe(true);
    } finally {
      await worker.shutdown();
    }
  });
});
