// What one execution of a run hands the next across continue-as-new, as one
// versioned shape, and the one place it is read: at the start of the next
// execution (./start.ts), where a state of an earlier shape is upgraded and a
// state of an unknown shape fails the run. Every field is required from there
// on: no code past the start asks "was this carried before the field existed".
// Pure (no workflow API): test/unit/carried-state.test.ts checks it directly.
import { ApplicationFailure } from '@temporalio/common';
import type { RunConfig } from '../common/contract.js';
import type { Decision } from '../common/transcript-text.js';
import { unreadableProblem } from '../common/undecodable.js';
import type { RunState } from './run-state.js';
import type { CarriedStream } from './run-stream.js';
import type { QueuedSteer } from './steering-queue.js';

/**
 * The version this code writes. Raise it when the shape changes, and add the
 * step from the previous version to `upgrades` (below): that is the only
 * place an older shape is known.
 */
export const CARRIED_STATE_VERSION = 3;

/** The failure type of a carried state this worker cannot read (unknown version, or a field missing or of the wrong type). */
export const CARRIED_STATE_ERROR = 'CarriedStateUnreadable';

/**
 * What one execution hands the next: all the loop knows, as plain JSON. The
 * workflow id, the trace's seq, the cost and the cache carry on; nothing is
 * pending at that point. Internal: it never appears in an exported type.
 */
export interface CarriedState {
  version: typeof CARRIED_STATE_VERSION;
  /** The configuration resolved when the run started: a new default on a new worker never changes a run under way. */
  cfg: RunConfig;
  state: RunState;
  decisions: Record<string, Decision>;
  /** The trace's last seq. */
  seq: number;
  /** Executions before this one. */
  executions: number;
  /** The run chain (RunIds.chainId, set in ./start.ts). */
  chainId: string;
  /** Steering messages not yet applied (./steering-queue.ts). */
  steers: QueuedSteer[];
  /** The live stream's window and offsets (./run-stream.ts). */
  stream: CarriedStream;
  /**
   * Signed steers, raises and reconciliations taken and not yet expired
   * (signed message's hash → expiresAt, ./signatures-used.ts): each is taken
   * once per run. The name is from when only steers were kept.
   */
  usedSteerSignatures: Record<string, string>;
}

/** What the loop starts from: the previous execution's hand-over, or a fresh, resumed or forked run's first state. */
export type LoopStart = Pick<CarriedState, 'state' | 'decisions' | 'seq' | 'executions' | 'steers' | 'usedSteerSignatures'>;

/**
 * The first execution of a run (fresh, resumed or forked): a resumed or
 * forked run's decisions and steering messages were its source's, for its
 * calls, so it starts with none. A decision is used once.
 */
export const firstExecution = (state: RunState): LoopStart => ({ state, decisions: {}, seq: 0, executions: 0, steers: [], usedSteerSignatures: {} });

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The steps from each older version to the next. 0.1 wrote no version (its
 * comments said 1 or 2, never read): its fields that were absent when empty
 * get their empty value; its fields absent only in states from before 0.1's
 * own shape are required by the check that follows.
 */
const upgrades: Record<string, (s: Obj) => Obj> = {
  '0.1': (s) => {
    const state = isObj(s.state) ? s.state : {};
    return {
      ...s,
      version: CARRIED_STATE_VERSION,
      steers: s.steers ?? [],
      usedSteerSignatures: s.usedSteerSignatures ?? {},
      state: { ...state, usageEstimatedTurns: state.usageEstimatedTurns ?? 0, budgetRaises: state.budgetRaises ?? [], usageOverReservation: state.usageOverReservation ?? null },
    };
  },
};

/** The version a carried state says it is; '0.1' for 0.1's unversioned shape (and the 1 and 2 it once wrote). */
function versionOf(s: Obj): string {
  const v = s.version;
  if (v === undefined || v === 1 || v === 2) return '0.1';
  return typeof v === 'number' || typeof v === 'string' ? String(v) : JSON.stringify(v);
}

const unreadable = (message: string, details: Obj = {}): ApplicationFailure =>
  ApplicationFailure.create({ type: CARRIED_STATE_ERROR, message: `cannot continue this run: ${message}`, nonRetryable: true, details: [details] });

/** Field → the check its value must pass, for the fields code downstream reads without a fallback. */
const topFields: Record<string, (v: unknown) => boolean> = {
  cfg: isObj,
  state: isObj,
  decisions: isObj,
  seq: Number.isInteger,
  executions: Number.isInteger,
  chainId: (v) => typeof v === 'string' && v !== '',
  steers: Array.isArray,
  stream: (v) => isObj(v) && isObj(v.state) && Array.isArray(v.boundaries),
  usedSteerSignatures: isObj,
};
const nonNegative = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const stateFields: Record<string, (v: unknown) => boolean> = {
  messages: Array.isArray,
  turns: Number.isInteger,
  toolRuns: Number.isInteger,
  costUsd: nonNegative,
  usage: (v) => isObj(v) && nonNegative(v.promptTokens) && nonNegative(v.completionTokens),
  promptTokensPerTurn: Array.isArray,
  cache: isObj,
  children: (v) => isObj(v) && Number.isInteger(v.runs) && nonNegative(v.costUsd) && isObj(v.usage),
  messagesAtLastCall: Number.isInteger,
  callsProposed: Number.isInteger,
  lastReplyFirstCall: Number.isInteger,
  usageEstimatedTurns: Number.isInteger,
  budgetRaises: Array.isArray,
  usageOverReservation: (v) => v === null || isObj(v),
};

/**
 * The carried state a continued execution was started with, upgraded to this
 * version and checked: the one place its shape is read. Throws a
 * non-retryable failure naming the version or the field when it cannot be
 * read (written by a newer worker, say, or not by a run at all).
 */
export function upgradeCarried(raw: unknown): CarriedState {
  const problem = unreadableProblem(raw, 'continue-as-new input');
  if (problem) throw unreadable(problem);
  if (!isObj(raw)) throw unreadable(`the carried state is ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}, not an object`);
  let s = raw;
  let version = versionOf(s);
  // Each step leads to the next version; at most one step per known version.
  for (let steps = 0; version !== String(CARRIED_STATE_VERSION) && upgrades[version] && steps <= Object.keys(upgrades).length; steps++) {
    s = upgrades[version](s);
    version = versionOf(s);
  }
  if (version !== String(CARRIED_STATE_VERSION)) {
    throw unreadable(`its carried state has version ${version}, which this worker does not know (it reads version ${CARRIED_STATE_VERSION} and upgrades ${Object.keys(upgrades).join(', ')}); run it on a worker of the version that wrote it`, { version: s.version });
  }
  const at = (fields: Record<string, (v: unknown) => boolean>, o: Obj, prefix: string): void => {
    for (const [field, ok] of Object.entries(fields)) {
      if (!ok(o[field])) throw unreadable(`its carried state (version ${version}) has ${o[field] === undefined ? 'no' : 'an invalid'} ${prefix}${field}`, { field: `${prefix}${field}` });
    }
  };
  at(topFields, s, '');
  at(stateFields, s.state as Obj, 'state.');
  return s as unknown as CarriedState;
}
