// How a Stop reaches a running call now that heartbeats are rare (each is a
// billed Action): through the loop's own process when the call runs there,
// through the next heartbeat's answer when it runs in another worker. Both
// end the run the same way: interrupted/cancelled, the call acknowledged as
// cancelled in history, nothing reported after the Stop.
import proto from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { Toolset } from '../activities/tools/toolset.js';
import { LONG_CALL, longCallTask, longCallTool } from '../bench/long-call-tool.js';
import { cancelSignal } from '../common/run-messages.js';
import type { RunResult } from '../common/contract.js';
import { useHarness, waitFor } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const { EventType } = proto.temporal.api.enums.v1;
const h = useHarness({ worker: false });
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

async function stopMidCall(handle: WorkflowHandle<typeof agentRun>): Promise<RunResult> {
  await waitFor('the call’s first progress line', () => h.trace(handle.workflowId).some((l) => l.type === 'tool_progress'));
  await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
  return handle.result();
}

async function expectAcknowledged(handle: WorkflowHandle, r: RunResult): Promise<void> {
  expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' } });
  const types = ((await handle.fetchHistory()).events ?? []).map((e) => e.eventType);
  // The run waited for the call to say it stopped (WAIT_CANCELLATION_COMPLETED).
  expect(types).toContain(EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED);
  expect(types).toContain(EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED);
  expect(types).not.toContain(EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED);
  const trace = h.trace(handle.workflowId);
  const cancelledAt = trace.findIndex((l) => l.type === 'tool_cancelled');
  expect(cancelledAt).toBeGreaterThan(-1);
  expect(trace.slice(cancelledAt).some((l) => l.type === 'tool_progress')).toBe(false);
}

describe('a Stop reaches a running call', () => {
  it('in the loop’s own worker at once, with no heartbeat to carry it', async () => {
    // Heartbeats every 10 minutes, 20-minute heartbeat and start-to-close
    // timeouts: only the in-process path can stop this call before the test
    // times out.
    const taskQueue = `stop-here-${randomUUID().slice(0, 8)}`;
    const w = await h.startWorker({ taskQueue, heartbeatEveryMs: 600_000, toolset: new Toolset([...BUILTIN_TOOLS, longCallTool({ heartbeatTimeoutMs: 1_200_000 })]) });
    stops.push(w.shutdown);
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue,
      workflowId: `stop-here-${randomUUID().slice(0, 8)}`,
      args: [{ task: longCallTask(600), model: 'script', tools: [LONG_CALL], toolTimeoutMs: 1_200_000 }],
    });
    await expectAcknowledged(handle, await stopMidCall(handle));
  });

  it('in another worker through its next heartbeat', async () => {
    const taskQueue = `stop-there-${randomUUID().slice(0, 8)}`;
    const toolset = new Toolset([...BUILTIN_TOOLS, longCallTool()]);
    // The loop here, its model and tool calls in a worker of their own.
    const loop = await h.startWorker({ taskQueue, loopOnly: true, toolset });
    const calls = await h.startWorker({ taskQueue, activitiesOnly: true, heartbeatEveryMs: 1000, toolset });
    stops.push(loop.shutdown, calls.shutdown);
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue,
      workflowId: `stop-there-${randomUUID().slice(0, 8)}`,
      args: [{ task: longCallTask(600), model: 'script', tools: [LONG_CALL] }],
    });
    await expectAcknowledged(handle, await stopMidCall(handle));
  });
});
