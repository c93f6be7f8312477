// Whether a workflow may still need what the worker keeps for it (ledger
// records, traces): running (its latest run: a reset or continued run
// included), closed since when, or not known to the server. Asked once per
// workflow id per retention pass, of the sweeper's own namespace only: a
// record or trace of another namespace is never looked up here (the server
// would answer "not found" for a workflow that is running elsewhere).
//
// "Not found" is unknown, never "forgotten": the id may be another
// namespace's or another cluster's, the server may have lost its visibility
// for a while, or the workflow may have been deleted by hand. Such a thing
// goes only when the server's own retention for the namespace (read from the
// server, never assumed) has passed since it was last written: a workflow
// running or closed within that time is found by describe, so what is still
// not found after it can no longer be retried or reset.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/** `closedAt` null: the server does not know the workflow (unknown, not "forgotten"). */
export type WorkflowState = { running: true } | { running: false; closedAt: number | null };

export function workflowStates(client: Client): (workflowId: string) => Promise<WorkflowState> {
  const known = new Map<string, Promise<WorkflowState>>();
  return (workflowId) => {
    let s = known.get(workflowId);
    if (!s) known.set(workflowId, (s = describe(client, workflowId)));
    return s;
  };
}

async function describe(client: Client, workflowId: string): Promise<WorkflowState> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    if (d.status.name === 'RUNNING') return { running: true };
    // A closed workflow without a close time cannot be judged by it: unknown.
    return { running: false, closedAt: d.closeTime?.getTime() ?? null };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { running: false, closedAt: null };
    throw err;
  }
}

/** How a sweep judges: what closed before `closedBefore` goes; what the server does not know goes only when last written before `unknownBefore`. */
export interface Judgement {
  closedBefore: number;
  /** now minus the namespace's retention as the server reports it; null (the server did not say): an unknown workflow's things stay. */
  unknownBefore: number | null;
}

/**
 * May a workflow's things go? Never while it runs; closed: when it closed
 * before `closedBefore`; not known to the server: only when last written
 * (`lastWrittenAt`) before the namespace's retention, as the server reports it.
 */
export function removable(s: WorkflowState, j: Judgement, lastWrittenAt: number): boolean {
  if (s.running) return false;
  if (s.closedAt !== null) return s.closedAt < j.closedBefore;
  return j.unknownBefore !== null && lastWrittenAt < j.unknownBefore;
}

/** The namespace's retention of closed workflows, in ms (null when the server does not say). */
export async function namespaceRetentionMs(client: Client, namespace: string): Promise<number | null> {
  const ns = await client.workflowService.describeNamespace({ namespace });
  const ttl = ns.config?.workflowExecutionRetentionTtl;
  if (!ttl?.seconds) return null;
  return Number(ttl.seconds) * 1000 + Math.round((ttl.nanos ?? 0) / 1e6);
}
