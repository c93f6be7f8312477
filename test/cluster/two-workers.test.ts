// Two worker processes on one task queue of the cluster, as the compose file
// runs them (`replicas: 2`): runs spread over both, and when one dies mid-run
// (SIGKILL) the other finishes every run, each step once.
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { useHarness, waitFor } from '../helpers/harness.js';
import { BUILTIN_TOOLS } from '../../activities/tools/builtin.js';
import { toolsetHash } from '../../worker/tool-routing.js';
import { startWorkerProcess } from '../helpers/worker-process.js';
import type { agentRun } from '../../workflows/index.js';

const h = useHarness({ worker: false });
const { EventType } = proto.temporal.api.enums.v1;

/** The identities of the workers that completed a run's workflow tasks and started its activities. */
async function workersOf(handle: WorkflowHandle<typeof agentRun>): Promise<Set<string>> {
  const events = (await handle.fetchHistory()).events ?? [];
  return new Set(
    events.flatMap((e) =>
      e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED ? [e.workflowTaskCompletedEventAttributes?.identity ?? '']
      : e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED ? [e.activityTaskStartedEventAttributes?.identity ?? '']
      : [],
    ),
  );
}

describe('two worker processes on one queue', () => {
  it('share the runs; one killed mid-run, the other finishes every run with each step once', async () => {
    const taskQueue = `pair-${randomUUID().slice(0, 8)}`;
    const common = { taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot };
    const [a, b] = await Promise.all([startWorkerProcess(common), startWorkerProcess(common)]);
    // A worker's identity: the SDK's pid@host and its tool set (worker/tool-routing.ts).
    const ids = [a, b].map((w) => `${w.child.pid}@${hostname()} tools:${toolsetHash(BUILTIN_TOOLS.map((t) => t.name))}`);
    try {
      const start = (model: string, i: number) =>
        h.client.workflow.start<typeof agentRun>('agentRun', {
          taskQueue,
          workflowId: `pair-${model}-${i}-${randomUUID().slice(0, 8)}`,
          args: [{ task: model === 'slow' ? 'Scan.' : 'Which file mentions a timeout?', model }],
          // A task lost with its worker is handed out again after 2 s.
          workflowTaskTimeout: '2s',
        });
      const quick = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => start('plan', i)));
      for (const r of await Promise.all(quick.map((q) => q.result()))) expect(r).toMatchObject({ status: 'completed', turns: 3 });
      const seen = new Set<string>();
      for (const q of quick) for (const w of await workersOf(q)) seen.add(w);
      // Both processes took work (the server spread the tasks of six runs over the two pollers).
      expect([...seen].sort()).toEqual([...ids].sort());

      const slow = await Promise.all([0, 1, 2, 3].map((i) => start('slow', i)));
      await waitFor('every scan under way', () => slow.every((s) => h.trace(s.workflowId).some((l) => l.type === 'tool_progress')));
      await a.kill();
      for (const r of await Promise.all(slow.map((s) => s.result()))) expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
      for (const s of slow) {
        await waitFor('run_stopped in the trace', () => h.events(s.workflowId).some((l) => l.type === 'run_stopped'));
        const lines = h.events(s.workflowId);
        expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
        expect(lines.map((l) => l.type)).toEqual(['run_started', 'turn', 'tool_start', 'tool_result', 'turn', 'run_stopped']);
      }
    } finally {
      await a.kill();
      await b.kill();
    }
  });
});
