// Whether a workflow may still need what the worker keeps for it (ledger
// records, traces, messages): running (its latest run: a reset or continued
// run included), or closed since when, or forgotten by the server (past the
// namespace's retention: no retry and no reset can ask for anything). Asked
// once per workflow id per retention pass.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';

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
    return { running: false, closedAt: d.closeTime?.getTime() ?? null };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { running: false, closedAt: null };
    throw err;
  }
}

/** May a workflow's things go: closed before `closedBefore`, or forgotten by the server? */
export function removable(s: WorkflowState, closedBefore: number): boolean {
  return !s.running && (s.closedAt === null || s.closedAt < closedBefore);
}

/** The namespace's retention of closed workflows, in ms (null when the server does not say). */
export async function namespaceRetentionMs(client: Client, namespace: string): Promise<number | null> {
  const ns = await client.workflowService.describeNamespace({ namespace });
  const ttl = ns.config?.workflowExecutionRetentionTtl;
  if (!ttl?.seconds) return null;
  return Number(ttl.seconds) * 1000 + Math.round((ttl.nanos ?? 0) / 1e6);
}
