// Waits until a run is parked on an approval for one call, and returns its
// status: what a person (or a script) needs before approving.
import type { WorkflowHandle } from '@temporalio/client';
import { statusQuery } from '../../common/run-messages.js';
import type { RunStatusView } from '../../common/contract.js';

export async function waitForApproval(handle: WorkflowHandle, callId: string, timeoutMs = 90_000): Promise<RunStatusView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await handle.query(statusQuery);
    if (s.interruption?.type === 'approval' && s.interruption.callId === callId) return s;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${handle.workflowId} to park on ${callId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
