// Retention of the effect ledger. A record is needed as long as someone may
// ask for its call again: a retry (only while the run is open), a reset (only
// while the server still holds the closed run's history: the namespace's
// retention). So a record goes when its workflow is closed and has been for
// longer than the maximum age (by default the namespace's retention). A size
// limit evicts the oldest records of closed workflows first. A workflow that
// is running (its latest run: a reset or continued run included) keeps every
// record, whatever its age or the size: an in-flight run never loses what
// protects its writes.
//
// A ledger may be shared by the workers of several namespaces (one workspace,
// one database). A sweep asks its own namespace's server, so it only ever
// judges its own namespace's records: another namespace's are never touched
// (its server would answer "not found" for a workflow that runs there), and
// neither are records without a namespace (written by older code: whose they
// are cannot be told). A workflow its server does not know is unknown, not
// forgotten: its records go only once the server's retention for the
// namespace has passed since they were last written (activities/workflow-state.ts).
import type { Client } from '@temporalio/client';
import { removable, workflowStates, type Judgement } from '../workflow-state.js';
import type { EffectRecord, EffectStore } from './record.js';

export interface LedgerRetention {
  maxAgeMs: number;
  maxBytes: number | null;
  /** The sweeper's namespace: only its records are judged. */
  namespace: string;
  /** The namespace's retention as its server reports it (null: it did not say, and records of workflows it does not know stay). */
  namespaceRetentionMs: number | null;
  /** Records looked at per step, and steps per pass (bounded work per pass). */
  batch?: number;
  pages?: number;
}

export interface SweepResult {
  removed: number;
  /** Records of running workflows that were old or over the size limit, kept. */
  keptInFlight: number;
  /** Records looked at that belong to another namespace or to none (older code), kept untouched. */
  keptOthers: number;
  size: { records: number; bytes: number };
}

/** When a record was last written (its claim, its result, or its outcome declared unknown). */
export const lastWritten = (r: EffectRecord): number => Math.max(r.claimedAt, r.doneAt ?? 0, r.unknownAt ?? 0);

/** One pass. `now` is this host's clock (the records' times are the store's; a little skew only shifts the pass). */
export async function sweepLedger(store: EffectStore, client: Client, limits: LedgerRetention, now = Date.now()): Promise<SweepResult> {
  const batch = limits.batch ?? 500;
  const stateOf = workflowStates(client);
  let removed = 0;
  const inFlight = new Set<string>();
  const others = new Set<string>();
  const unknownBefore = limits.namespaceRetentionMs === null ? null : now - limits.namespaceRetentionMs;
  const goners = async (records: EffectRecord[], closedBefore: number) => {
    const judgement: Judgement = { closedBefore, unknownBefore };
    const keys: string[] = [];
    for (const r of records) {
      // Not ours to judge: another namespace's server knows its workflows, ours does not.
      if (r.namespace !== limits.namespace) {
        others.add(r.key);
        continue;
      }
      const s = await stateOf(r.workflowId);
      if (s.running) inFlight.add(r.key);
      else if (removable(s, judgement, lastWritten(r))) keys.push(r.key);
    }
    return keys;
  };

  // By age: closed for longer than maxAge. A record is never younger than
  // its run's close, so only old ones are asked about; paged, so old records
  // of running workflows (or of other namespaces) never hide the rest.
  const cutoff = now - limits.maxAgeMs;
  const old: string[] = [];
  for (let offset = 0, page = 0; page < (limits.pages ?? 20); page++) {
    const records = await store.oldest(cutoff, batch, offset);
    old.push(...(await goners(records, cutoff)));
    if (records.length < batch) break;
    offset += records.length;
  }
  removed += await store.remove(old);

  // By size: the oldest records of closed workflows, whatever their age. The
  // size is the whole store's: with several namespaces in one store, each
  // sweeper evicts only its own, so the limit may stay exceeded (keptOthers says why).
  let size = await store.size();
  for (let kept = 0; limits.maxBytes !== null && size.bytes > limits.maxBytes; ) {
    const records = await store.oldest(Number.POSITIVE_INFINITY, batch, kept);
    if (records.length === 0) break;
    const keys = await goners(records, Number.POSITIVE_INFINITY);
    kept += records.length - keys.length;
    removed += await store.remove(keys);
    size = await store.size();
  }
  return { removed, keptInFlight: inFlight.size, keptOthers: others.size, size };
}
