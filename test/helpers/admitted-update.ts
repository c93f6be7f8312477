// Waiting for the server to hold an update no worker has taken yet: the tests
// that send one in a run's first workflow task (or to a run whose worker is
// gone) need that moment, and must not guess it with a sleep.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { waitFor } from './harness.js';

/** Waits until the server holds update `updateId` of the run (admitted: sent, not yet delivered to any worker). */
export async function admitted(client: Client, workflowId: string, runId: string, updateId: string): Promise<void> {
  await waitFor(`update ${updateId} admitted`, async () => {
    try {
      await client.workflowService.pollWorkflowExecutionUpdate({
        namespace: client.options.namespace,
        updateRef: { workflowExecution: { workflowId, runId }, updateId },
        identity: 'test',
        waitPolicy: { lifecycleStage: temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED },
      });
      return true;
    } catch (err) {
      // Not there yet: the client is still encoding and sending it.
      if ((err as { code?: unknown }).code === 5) return null;
      throw err;
    }
  });
}
