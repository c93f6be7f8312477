// What the CLI reads of a run it is about to resume or fork, to check the new
// run's input before starting it. A finished run answers a query only through
// a worker replaying it: with no worker up the query would wait, so it gets a
// few seconds and the checks that need it are left to the workflow.
import { type Client, type WorkflowHandle } from '@temporalio/client';
import type { ChatMessage, RunConfig, RunStatusView } from '../common/contract.js';
import { configQuery, statusQuery, transcriptQuery } from '../common/run-messages.js';

const QUERY_WAIT_MS = 5000;

/** The run's resolved configuration, or null when it does not answer in time (no worker, a run older than the query). */
export function configOf(c: Client, handle: WorkflowHandle): Promise<RunConfig | null> {
  return c.connection.withDeadline(Date.now() + QUERY_WAIT_MS, () => handle.query(configQuery)).catch(() => null);
}

/** The run's status view, or null when it does not answer in time. */
export function statusOf(c: Client, handle: WorkflowHandle): Promise<RunStatusView | null> {
  return c.connection.withDeadline(Date.now() + QUERY_WAIT_MS, () => handle.query(statusQuery)).catch(() => null);
}

/** The run's messages, or null when it does not answer in time. */
export function transcriptOf(c: Client, handle: WorkflowHandle): Promise<ChatMessage[] | null> {
  return c.connection.withDeadline(Date.now() + QUERY_WAIT_MS, () => handle.query(transcriptQuery)).catch(() => null);
}
