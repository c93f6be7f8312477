// When a run continues as new, and what it carries. Long runs would otherwise
// grow history with the square of their turns (each model call stores the
// whole transcript again) until Temporal's limits stop them.
import * as wf from '@temporalio/workflow';
import type { Decision } from '../common/transcript-text';
import type { LoopState } from './run-state';
import type { QueuedSteer } from './steering';
import type { RunConfig } from '../common/contract';

/**
 * What one execution hands the next: all the loop knows, as plain JSON. The
 * run id (workflow id), the trace's seq, the cost and the cache carry on;
 * nothing is pending at that point.
 */
export interface CarriedState {
  version: 1 | 2;
  /** The configuration resolved when the run started (version 2 on). */
  cfg?: RunConfig;
  state: LoopState;
  decisions: Record<string, Decision>;
  seq: number;
  /** Executions before this one. */
  executions: number;
  /** The run chain (see agentRun); absent in states carried before it was: the first execution's run id. */
  chainId?: string;
  /** Steering messages not yet applied (./steering); absent when none. */
  steers?: QueuedSteer[];
}

/**
 * The start of a run that continues another's transcript (a resume; a fork):
 * the decisions and the steering messages were that run's, for its calls, so
 * it starts with none. A decision is used once.
 */
export function startedFrom(cfg: RunConfig, state: LoopState): CarriedState {
  return { version: 2, cfg, state, decisions: {}, seq: 0, executions: 0 };
}

/**
 * Guards the continue-as-new decision: runs whose history was recorded before
 * it existed replay without it (see "Changing the loop safely" in the README).
 */
export const CONTINUE_AS_NEW_PATCH = 'continue-as-new-v1';

/**
 * Temporal suggests it (4 MiB or 4,096 events by default) or history passed
 * our own threshold, and this execution has taken at least one turn: a carried
 * state larger than the threshold must not make every execution continue at
 * once, forever.
 */
export function isContinueAsNewDue(turnsThisExecution: number, thresholdBytes: number): boolean {
  if (turnsThisExecution === 0) return false;
  const info = wf.workflowInfo();
  if (!info.continueAsNewSuggested && info.historySize < thresholdBytes) return false;
  return wf.patched(CONTINUE_AS_NEW_PATCH);
}
