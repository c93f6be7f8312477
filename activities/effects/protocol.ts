// The effect protocol every write goes through (built-in, a deployment's own
// tools, MCP tools that are not read-only), whatever store holds the records:
//
// 1. Read the call's record. None: claim it (an exclusive create naming this
//    attempt: run id, attempt, worker, a lease). Done: answer with what was
//    recorded — verbatim in the same run, as "already <done> by run R at T
//    (not <done> again)" in another run of the workflow (a reset). Unknown:
//    say so. Claimed, lease alive: another attempt may still report; wait for
//    it (or fail retryably when this attempt's time runs out). Claimed, lease
//    expired: nobody can say whether it acted — declare the outcome unknown
//    (a compare-and-set, so only one attempt does) and say so; never act blind.
// 2. Act, renewing the lease while the tool works; the lease is checked again
//    right before the irreversible step (EffectGuard.confirm), so an attempt
//    whose claim was taken over (a zombie: its host was partitioned, its
//    process paused past its timeout) does not act.
// 3. Record the result — only while holding the claim. A zombie that acted
//    anyway after a takeover records its result as late: the record then says
//    what really happened, for whoever asks next.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { NothingChanged, ToolError } from '../tools/tool-error.js';
import type { EffectRecord, EffectStore, RecordedOutcome } from './record.js';
import { doneByEarlierRun, outcomeUnknown } from './wording.js';

/** Who is asking: one attempt of one tool activity. */
export interface WriteAttempt {
  workflowId: string;
  /** The workflow's namespace: recorded, so retention in another namespace never removes the record. */
  namespace?: string;
  /** Temporal's run id of the workflow execution. */
  runId: string;
  attempt: number;
  /** `pid@host`. */
  worker: string;
}

/** What a write tool gets to check its claim with. */
export interface EffectGuard {
  /**
   * Call right before the irreversible step: throws (and the step must not
   * happen) when this attempt no longer holds the claim or its time is up.
   */
  confirm(): Promise<void>;
}

/** The tool outcome of a write (ToolOutcome without the message-store address). */
export type WriteOutcome =
  | { ok: true; content: string; outcomeUnknown?: true; earlierRun?: string }
  | { ok: false; error: string; permanent: boolean; earlierRun?: string };

/** One line for the trace: what the protocol decided for this attempt. */
export interface EffectNote {
  verdict: 'acted' | 'replayed' | 'earlier_run' | 'unknown' | 'released' | 'late' | 'lost';
  holder?: { runId: string; attempt: number; worker: string };
  /** How long this attempt waited for another attempt's live lease, in ms. */
  waitedMs?: number;
  reason?: string;
}

export interface WriteCall {
  store: EffectStore;
  key: string;
  toolName: string;
  attempt: WriteAttempt;
  /**
   * When this attempt stops starting anything, by this host's clock: its
   * activity's timeout less a safety margin (safetyMarginMs), so it is never
   * acting when Temporal starts another attempt.
   */
  deadline: number;
  /** How long a claim stays alive without renewal (renewed every third of it). */
  leaseMs: number;
  signal: AbortSignal;
  /** The effect in the past tense, for "already deleted by run R" (default "done"). */
  pastTense?: string;
  /** A person chose to retry a write whose outcome is unknown: claim it anew and act. */
  retryUnknown?: boolean;
  note?(n: EffectNote): void;
}

/** Thrown by EffectGuard.confirm: the claim is gone, and the step must not happen. */
export class EffectClaimLost extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EffectClaimLost';
  }
}

/** How long before its deadline an attempt stops waiting or starting things: dispatch delay and clocks are never exact. */
export function safetyMarginMs(startToCloseMs: number): number {
  return Math.min(10_000, Math.max(1000, Math.round(startToCloseMs / 10)));
}

export async function runWrite(call: WriteCall, act: (guard: EffectGuard) => Promise<string>): Promise<WriteOutcome> {
  const { store, key } = call;
  const started = Date.now();
  const waited = () => (Date.now() - started > 50 ? { waitedMs: Date.now() - started } : {});
  for (;;) {
    if (call.signal.aborted) throw new CancelledFailure(`${call.toolName} stopped before it started: nothing changed`);
    const { found, now } = await store.read(key);
    if (!found) {
      const record = newClaim(call, now);
      const version = await store.create(record);
      // Another attempt claimed it between the read and the create: read again.
      if (version === null) continue;
      return actHolding(call, new Claim(store, record, version, now, call), act);
    }
    const r = found.record;
    if (r.state === 'done') {
      const sameRun = r.holder.runId === call.attempt.runId || r.holder.runId === '';
      call.note?.({ verdict: sameRun ? 'replayed' : 'earlier_run', holder: holderOf(r), ...waited() });
      return sameRun ? replay(r.outcome) : earlierRun(r, call.pastTense ?? 'done');
    }
    if (r.state === 'unknown') {
      if (call.retryUnknown) {
        const record = newClaim(call, now);
        if (!(await store.replace(record, found.version))) continue;
        return actHolding(call, new Claim(store, record, found.version + 1, now, call), act);
      }
      call.note?.({ verdict: 'unknown', holder: holderOf(r), reason: r.unknownReason, ...waited() });
      return { ok: true, content: outcomeUnknown(r, call.attempt.runId, false), outcomeUnknown: true };
    }
    if (r.leaseUntil > now) {
      // Its holder may still report: wait for it, as long as this attempt has time.
      const pause = Math.min(500, Math.max(50, Math.round(call.leaseMs / 5)));
      if (Date.now() + pause > call.deadline) {
        throw ApplicationFailure.retryable(
          `${call.toolName}: attempt ${r.holder.attempt} on ${r.holder.worker} holds this call's claim until ${new Date(r.leaseUntil).toISOString()}; it may still report`,
          'EffectInProgress',
        );
      }
      await sleep(pause, call.signal);
      continue;
    }
    // The holder went quiet: whether it acted nobody can say. Only one attempt declares it.
    const declared: EffectRecord = { ...r, state: 'unknown', unknownAt: now, unknownBy: call.attempt.worker };
    if (!(await store.replace(declared, found.version))) continue;
    call.note?.({ verdict: 'unknown', holder: holderOf(r), reason: 'its lease expired', ...waited() });
    return { ok: true, content: outcomeUnknown(declared, call.attempt.runId, false), outcomeUnknown: true };
  }
}

async function actHolding(call: WriteCall, claim: Claim, act: (guard: EffectGuard) => Promise<string>): Promise<WriteOutcome> {
  let outcome: RecordedOutcome;
  // Whether the tool passed a confirm(): from then on it may have acted.
  let mayHaveActed = false;
  try {
    await claim.confirm();
    outcome = {
      ok: true,
      content: await act({
        confirm: async () => {
          await claim.confirm();
          mayHaveActed = true;
        },
      }),
    };
  } catch (caught) {
    claim.stop();
    let err = caught;
    if (err instanceof EffectClaimLost) {
      if (!mayHaveActed) {
        // Checked right before acting: this attempt did nothing. Out of time
        // (not taken over), it still holds the claim: released, so a retry may act.
        await claim.release().catch(() => {});
        call.note?.({ verdict: 'lost', reason: err.message });
        throw ApplicationFailure.retryable(`${call.toolName}: ${err.message}; this attempt did not act`, 'EffectClaimLost');
      }
      // A tool that confirms before each of several steps lost its claim after one: it may have acted.
      err = new Error(`lost its claim after it began (${err.message})`);
    }
    if (err instanceof NothingChanged) {
      // A store that cannot take the release leaves the claim to expire: the next attempt then says "unknown", never acts blind.
      await claim.release().catch(() => {});
      call.note?.({ verdict: 'released' });
      if (err.reason instanceof ToolError) return { ok: false, error: err.reason.message, permanent: err.reason.permanent };
      throw err.reason;
    }
    if (err instanceof ToolError) {
      outcome = { ok: false, error: err.message, permanent: err.permanent };
    } else {
      const stopped = call.signal.aborted || err instanceof CancelledFailure;
      const reason = stopped ? 'the run was stopped while it ran' : `${err instanceof Error ? err.message : String(err)}`;
      const declared = await claim.declareUnknown(reason);
      call.note?.({ verdict: 'unknown', reason });
      // A Stop stays a Stop (the workflow records the call as stopped); the ledger says unknown for whoever asks next.
      if (stopped) throw err;
      return { ok: true, content: outcomeUnknown(declared, call.attempt.runId, true), outcomeUnknown: true };
    }
  }
  const how = await claim.complete(outcome);
  call.note?.({ verdict: how === 'recorded' ? 'acted' : 'late' });
  return outcome;
}

function newClaim(call: WriteCall, now: number): EffectRecord {
  const { runId, attempt, worker } = call.attempt;
  return {
    key: call.key,
    workflowId: call.attempt.workflowId,
    ...(call.attempt.namespace !== undefined ? { namespace: call.attempt.namespace } : {}),
    toolName: call.toolName,
    state: 'claimed',
    holder: { runId, attempt, worker, token: randomUUID() },
    claimedAt: now,
    leaseUntil: now + call.leaseMs,
  };
}

const holderOf = (r: EffectRecord) => ({ runId: r.holder.runId, attempt: r.holder.attempt, worker: r.holder.worker });

function replay(o: RecordedOutcome | undefined): WriteOutcome {
  if (!o) return { ok: true, content: '' };
  return o.ok ? { ok: true, content: o.content } : { ok: false, error: o.error, permanent: o.permanent };
}

function earlierRun(r: EffectRecord, pastTense: string): WriteOutcome {
  const text = doneByEarlierRun(r, pastTense);
  return r.outcome?.ok === false ? { ok: false, error: text, permanent: r.outcome.permanent, earlierRun: r.holder.runId } : { ok: true, content: text, earlierRun: r.holder.runId };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(t);
      reject(new CancelledFailure('stopped while waiting for another attempt of this write'));
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
}

/**
 * This attempt's claim: renewed every third of the lease while the tool
 * works (serialised, so a renewal never races another), given up for good the
 * moment a compare-and-set fails (someone else changed the record: a takeover).
 */
class Claim {
  private lost: string | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  /** The store's clock minus this host's: leases are written on the store's clock. */
  private readonly skew: number;
  /** Lost only because this attempt's time is up: nobody took the claim over, it still holds its version. */
  private timeUp = false;

  constructor(
    private readonly store: EffectStore,
    private record: EffectRecord,
    private version: number,
    storeNow: number,
    private readonly call: WriteCall,
  ) {
    this.skew = storeNow - Date.now();
    this.timer = setInterval(() => void this.renew().catch(() => {}), Math.max(20, Math.round(call.leaseMs / 3)));
  }

  private storeNow(): number {
    return Date.now() + this.skew;
  }

  /**
   * Renews the lease; throws EffectClaimLost when the claim is gone or this
   * attempt's time is up. Called right before acting, so a store that fails
   * here means nothing was done (NothingChanged: Temporal retries).
   */
  async confirm(): Promise<void> {
    let held: boolean;
    try {
      held = await this.renew();
    } catch (err) {
      throw new NothingChanged(err);
    }
    if (!held) throw new EffectClaimLost(this.lost ?? 'the claim is gone');
  }

  renew(): Promise<boolean> {
    return this.serial(async () => {
      if (this.lost) return false;
      if (Date.now() > this.call.deadline) {
        this.lost = `attempt ${this.call.attempt.attempt}'s time is up (Temporal has given up on it)`;
        this.timeUp = true;
        clearInterval(this.timer);
        return false;
      }
      const next = { ...this.record, leaseUntil: this.storeNow() + this.call.leaseMs };
      if (!(await this.store.replace(next, this.version))) {
        this.lost = `another attempt took this call over (${await this.describeNow()})`;
        clearInterval(this.timer);
        return false;
      }
      this.record = next;
      this.version += 1;
      return true;
    });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Nothing happened: the key may be claimed again. */
  release(): Promise<void> {
    this.stop();
    return this.serial(async () => {
      if (!this.lost || this.timeUp) await this.store.release(this.record.key, this.version);
    });
  }

  /** The holder's own call failed after it started: nobody knows whether it acted. */
  declareUnknown(reason: string): Promise<EffectRecord> {
    this.stop();
    return this.serial(async () => {
      const declared: EffectRecord = { ...this.record, state: 'unknown', unknownAt: this.storeNow(), unknownBy: this.call.attempt.worker, unknownReason: reason };
      // Taken over meanwhile: another attempt declared it unknown already.
      if (!this.lost || this.timeUp) await this.store.replace(declared, this.version);
      return declared;
    });
  }

  /** Records the result: 'late' when another attempt had declared the outcome unknown meanwhile (the record now says what happened). */
  complete(outcome: RecordedOutcome): Promise<'recorded' | 'late' | 'lost'> {
    this.stop();
    return this.serial(async () => {
      const done: EffectRecord = { ...this.record, state: 'done', outcome, doneAt: this.storeNow() };
      // Out of time but not taken over, the claim is still this attempt's: the result is recorded as usual.
      if ((!this.lost || this.timeUp) && (await this.store.replace(done, this.version))) return 'recorded' as const;
      for (;;) {
        const { found } = await this.store.read(this.record.key);
        const r = found?.record;
        if (!found || !r || r.state !== 'unknown' || r.holder.token !== this.record.holder.token) return 'lost' as const;
        if (await this.store.replace({ ...r, state: 'done', outcome, doneAt: this.storeNow(), late: true }, found.version)) return 'late' as const;
      }
    });
  }

  private async describeNow(): Promise<string> {
    const { found } = await this.store.read(this.record.key).catch(() => ({ found: null }));
    return found ? `the record is now ${found.record.state}` : 'the record is gone';
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.queue.then(fn);
    this.queue = p.catch(() => {});
    return p;
  }
}
