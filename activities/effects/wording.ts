// What the model reads when the ledger, not the tool, answers a call: a write
// an earlier run of the workflow already did (a reset run asks again), and a
// write whose outcome nobody knows. Our own words, stable (they go into the
// transcript, whose length the workflow's decisions read).
import type { EffectRecord } from './record.js';

const at = (ms: number | undefined) => new Date(ms ?? 0).toISOString();

/** `already deleted by run R at T (not deleted again): deleted access.log` */
export function doneByEarlierRun(r: EffectRecord, pastTense: string): string {
  const o = r.outcome;
  if (o?.ok === false) return `run ${r.holder.runId} already tried this at ${at(r.doneAt)} and it failed (not tried again): ${o.error}`;
  return `already ${pastTense} by run ${r.holder.runId} at ${at(r.doneAt)} (not ${pastTense} again): ${o?.content ?? ''}`;
}

/**
 * `outcome unknown: a previous attempt on 123@host started this at T and did
 * not report; it may or may not have happened.` `self`: the attempt that
 * started it is the one answering (its call failed after it was sent).
 */
export function outcomeUnknown(r: EffectRecord, currentRunId: string, self: boolean): string {
  const h = r.holder;
  const run = h.runId && h.runId !== currentRunId ? ` (run ${h.runId})` : '';
  const who = self ? `this attempt on ${h.worker}` : `a previous attempt on ${h.worker}${run}`;
  const what = self ? `got no answer${r.unknownReason ? ` (${r.unknownReason})` : ''}` : `did not report${r.unknownReason ? ` (${r.unknownReason})` : ''}`;
  return `outcome unknown: ${who} started this ${r.toolName} call at ${at(r.claimedAt)} and ${what}; it may or may not have happened. It was not tried again.`;
}
