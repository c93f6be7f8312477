// What one execution of a run hands the next (continue-as-new), and what a
// resumed or forked run starts from: the loop's state as plain JSON.
import type { Decision } from '../common/transcript-text.js';
import type { RunState } from './run-state.js';
import type { QueuedSteer } from './steering-queue.js';
import type { RunConfig } from '../common/contract.js';

/**
 * What one execution hands the next: all the loop knows, as plain JSON. The
 * run id (workflow id), the trace's seq, the cost and the cache carry on;
 * nothing is pending at that point.
 */
export interface CarriedState {
  /** Written by executions before this one's code (1 or 2); nothing reads it: what a state holds is told by its fields. */
  version?: 1 | 2;
  /** The configuration resolved when the run started (absent in the oldest carried states). */
  cfg?: RunConfig;
  state: RunState;
  decisions: Record<string, Decision>;
  seq: number;
  /** Executions before this one. */
  executions: number;
  /** The run chain (RunIds.chainId, set in ./start.ts); absent in states carried before it was: the first execution's run id. */
  chainId?: string;
  /** Steering messages not yet applied (./steering-queue.ts); absent when none. */
  steers?: QueuedSteer[];
}

/**
 * The start of a run that continues another's transcript (a resume; a fork):
 * the decisions and the steering messages were that run's, for its calls, so
 * it starts with none. A decision is used once.
 */
export function startedFrom(cfg: RunConfig, state: RunState): CarriedState {
  return { cfg, state, decisions: {}, seq: 0, executions: 0 };
}
