// Retention of the effect ledger. A record is needed as long as someone may
// ask for its call again: a retry (only while the run is open), a reset (only
// while the server still holds the closed run's history: the namespace's
// retention). So a record goes when its workflow is closed and has been for
// longer than the maximum age (by default the namespace's retention), or when
// the server no longer knows the workflow. A size limit evicts the oldest
// records of closed workflows first. A workflow that is running (its latest
// run: a reset or continued run included) keeps every record, whatever its age
// or the size: an in-flight run never loses what protects its writes.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { EffectRecord, EffectStore } from './record';

export interface LedgerRetention {
  maxAgeMs: number;
  maxBytes: number | null;
  /** Records looked at per pass and per step (bounded work per pass). */
  batch?: number;
}

export interface SweepResult {
  removed: number;
  /** Records of running workflows that were old or over the size limit, kept. */
  keptInFlight: number;
  size: { records: number; bytes: number };
}

type WorkflowState = { running: true } | { running: false; closedAt: number | null };

/** One pass. `now` is this host's clock (the records' times are the store's; a little skew only shifts the pass). */
export async function sweepLedger(store: EffectStore, client: Client, limits: LedgerRetention, now = Date.now()): Promise<SweepResult> {
  const batch = limits.batch ?? 500;
  const states = new Map<string, Promise<WorkflowState>>();
  const stateOf = (workflowId: string) => {
    let s = states.get(workflowId);
    if (!s) states.set(workflowId, (s = workflowState(client, workflowId)));
    return s;
  };
  let removed = 0;
  const inFlight = new Set<string>();
  const removable = async (records: EffectRecord[], closedBefore: number) => {
    const keys: string[] = [];
    for (const r of records) {
      const s = await stateOf(r.workflowId);
      if (s.running) inFlight.add(r.key);
      else if (s.closedAt === null || s.closedAt < closedBefore) keys.push(r.key);
    }
    return keys;
  };

  // By age: closed (or forgotten by the server) for longer than maxAge. A
  // record is never younger than its run's close, so only old ones are asked about.
  const cutoff = now - limits.maxAgeMs;
  removed += await store.remove(await removable(await store.oldest(cutoff, batch), cutoff));

  // By size: the oldest records of closed workflows, whatever their age.
  let size = await store.size();
  while (limits.maxBytes !== null && size.bytes > limits.maxBytes) {
    const keys = await removable(await store.oldest(Number.POSITIVE_INFINITY, batch), Number.POSITIVE_INFINITY);
    if (keys.length === 0) break;
    removed += await store.remove(keys);
    size = await store.size();
  }
  return { removed, keptInFlight: inFlight.size, size };
}

async function workflowState(client: Client, workflowId: string): Promise<WorkflowState> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    if (d.status.name === 'RUNNING') return { running: true };
    return { running: false, closedAt: d.closeTime?.getTime() ?? null };
  } catch (err) {
    // Gone from the server (past its retention): no retry and no reset can ask for its records.
    if (err instanceof WorkflowNotFoundError) return { running: false, closedAt: null };
    throw err;
  }
}

/** The namespace's retention of closed workflows, in ms (null when the server does not say). */
export async function namespaceRetentionMs(client: Client, namespace: string): Promise<number | null> {
  const ns = await client.workflowService.describeNamespace({ namespace });
  const ttl = ns.config?.workflowExecutionRetentionTtl;
  if (!ttl?.seconds) return null;
  return Number(ttl.seconds) * 1000 + Math.round((ttl.nanos ?? 0) / 1e6);
}
