// What the effect ledger holds per write: one record per idempotency key (one
// call occurrence), which attempt claimed it and until when, and what came of
// it. Plain data: the folder store keeps it as JSON, the PostgreSQL store as a
// row. Times are milliseconds since the epoch by the store's clock, so leases
// compare on one clock whichever host reads them.

/** The attempt that holds (or held) a claim. */
export interface Holder {
  /** Temporal's run id of the workflow execution (a reset run has a new one). */
  runId: string;
  /** Temporal's attempt number of the tool activity. */
  attempt: number;
  /** The worker process, `pid@host` as Temporal names workers. */
  worker: string;
  /** One per attempt execution: tells the holder from a zombie of the same attempt. */
  token: string;
}

/** What a write reported: its text for the model, or the error it reported (a ToolError). */
export type RecordedOutcome = { ok: true; content: string } | { ok: false; error: string; permanent: boolean };

/** `claimed`: an attempt holds it and may be acting; `done`: the write reported; `unknown`: its holder vanished mid-write. */
export type EffectState = 'claimed' | 'done' | 'unknown';

/** One write's record in the effect ledger (docs/effects.md), kept by an {@link EffectStore}. */
export interface EffectRecord {
  /** The call's idempotency key: one per call occurrence. */
  key: string;
  /** The run that made the call. */
  workflowId: string;
  /**
   * The Temporal namespace of the workflow that claimed it. Retention removes
   * only its own namespace's records (a shared ledger is asked about by each
   * namespace's workers); a record without one (older code) is never removed.
   */
  namespace?: string;
  /** The tool called. */
  toolName: string;
  /** Where the write stands. */
  state: EffectState;
  /** The attempt that claimed it (or took it over). */
  holder: Holder;
  /** When it was claimed (ms since the epoch, the store's clock). */
  claimedAt: number;
  /** Past this, another attempt may declare the outcome unknown (the holder renews it while it works). */
  leaseUntil: number;
  /** `done`: what the write reported, and when. */
  outcome?: RecordedOutcome;
  /** When it was recorded done (ms since the epoch). */
  doneAt?: number;
  /** `done` after the claim had been declared unknown: a zombie attempt acted and reported late. */
  late?: boolean;
  /** `unknown`: when, by which worker and why the outcome was declared unknown. */
  unknownAt?: number;
  /** The worker that declared it unknown. */
  unknownBy?: string;
  /** Why, in one line. */
  unknownReason?: string;
}

/** A record with the version a compare-and-set must name. */
export interface Versioned {
  /** The record as read. */
  record: EffectRecord;
  /** Its version: what `replace` and `release` must name. */
  version: number;
}

/**
 * Where records live. Every write is a compare-and-set on the record's
 * version, so two attempts (on two hosts) never both win: a claim is an
 * exclusive create, a renewal, a takeover or a result replaces the version
 * its writer read. Versions only grow (a released claim leaves a tombstone),
 * so a writer that read an old record can never overwrite a newer one.
 */
export interface EffectStore {
  /** For logs and errors: where the records are. */
  readonly where: string;
  /** The record (null: none, or released) and the store's clock now. */
  read(key: string): Promise<{ found: Versioned | null; now: number }>;
  /** Creates the record unless one exists (a released one does not count): its version, or null when another claim won. */
  create(record: EffectRecord): Promise<number | null>;
  /** Replaces `version` with `record`: false when the record changed since it was read. */
  replace(record: EffectRecord, version: number): Promise<boolean>;
  /** Releases a claim (nothing happened): false when the record changed since it was read. */
  release(key: string, version: number): Promise<boolean>;
  /** Retention: records claimed before `before` (ms), oldest first, at most `limit`, skipping the first `offset`. */
  oldest(before: number, limit: number, offset?: number): Promise<EffectRecord[]>;
  /** Retention: removes these records for good. */
  remove(keys: readonly string[]): Promise<number>;
  /** Retention: how many records, and about how many bytes they take. */
  size(): Promise<{ records: number; bytes: number }>;
  /** Releases the store's connections; called when the worker stops. */
  close(): Promise<void>;
}
