// Retention of the effect ledger. A record is needed as long as someone may
// ask for its call again: a retry (only while the run is open), a reset (only
// while the server still holds the closed run's history: the namespace's
// retention). So a record goes when its workflow is closed and has been for
// longer than the maximum age (by default the namespace's retention), or when
// the server no longer knows the workflow. A size limit evicts the oldest
// records of closed workflows first. A workflow that is running (its latest
// run: a reset or continued run included) keeps every record, whatever its age
// or the size: an in-flight run never loses what protects its writes.
import type { Client } from '@temporalio/client';
import { removable, workflowStates } from '../workflow-state.js';
import type { EffectRecord, EffectStore } from './record.js';

export interface LedgerRetention {
  maxAgeMs: number;
  maxBytes: number | null;
  /** Records looked at per step, and steps per pass (bounded work per pass). */
  batch?: number;
  pages?: number;
}

export interface SweepResult {
  removed: number;
  /** Records of running workflows that were old or over the size limit, kept. */
  keptInFlight: number;
  size: { records: number; bytes: number };
}

/** One pass. `now` is this host's clock (the records' times are the store's; a little skew only shifts the pass). */
export async function sweepLedger(store: EffectStore, client: Client, limits: LedgerRetention, now = Date.now()): Promise<SweepResult> {
  const batch = limits.batch ?? 500;
  const stateOf = workflowStates(client);
  let removed = 0;
  const inFlight = new Set<string>();
  const goners = async (records: EffectRecord[], closedBefore: number) => {
    const keys: string[] = [];
    for (const r of records) {
      const s = await stateOf(r.workflowId);
      if (s.running) inFlight.add(r.key);
      else if (removable(s, closedBefore)) keys.push(r.key);
    }
    return keys;
  };

  // By age: closed (or forgotten by the server) for longer than maxAge. A
  // record is never younger than its run's close, so only old ones are asked
  // about; paged, so old records of running workflows never hide the rest.
  const cutoff = now - limits.maxAgeMs;
  const old: string[] = [];
  for (let offset = 0, page = 0; page < (limits.pages ?? 20); page++) {
    const records = await store.oldest(cutoff, batch, offset);
    old.push(...(await goners(records, cutoff)));
    if (records.length < batch) break;
    offset += records.length;
  }
  removed += await store.remove(old);

  // By size: the oldest records of closed workflows, whatever their age.
  let size = await store.size();
  for (let kept = 0; limits.maxBytes !== null && size.bytes > limits.maxBytes; ) {
    const records = await store.oldest(Number.POSITIVE_INFINITY, batch, kept);
    if (records.length === 0) break;
    const keys = await goners(records, Number.POSITIVE_INFINITY);
    kept += records.length - keys.length;
    removed += await store.remove(keys);
    size = await store.size();
  }
  return { removed, keptInFlight: inFlight.size, size };
}
