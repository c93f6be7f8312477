// When a run continues as new, and what it carries. Long runs would otherwise
// grow history with the square of their turns (each model call stores the
// whole transcript again) until Temporal's limits stop them. What one
// execution hands the next (CarriedState, the loop's state as plain JSON) is
// also what a resumed or forked run starts from (startedFrom).
import * as wf from '@temporalio/workflow';
import type { AgentInput, RunConfig, RunResult } from '../common/contract.js';
import type { Decision } from '../common/transcript-text.js';
import type { Approvals } from './approvals.js';
import type { RunContext } from './run-context.js';
import type { RunState } from './run-state.js';
import type { CarriedStream } from './run-stream.js';
import type { Steering } from './steering.js';
import type { QueuedSteer } from './steering-queue.js';

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
  /** The live stream's window and offsets (./run-stream.ts); absent in states carried before it. */
  stream?: CarriedStream;
  /**
   * Signed steers, raises and reconciliations taken and not yet expired
   * (signed message's hash → expiresAt, ./signatures-used.ts): each is taken
   * once per run; absent when none. The name is from when only steers were
   * kept (by their signature's text).
   */
  usedSteerSignatures?: Record<string, string>;
}

/**
 * The start of a run that continues another's transcript (a resume; a fork):
 * the decisions and the steering messages were that run's, for its calls, so
 * it starts with none. A decision is used once.
 */
export function startedFrom(cfg: RunConfig, state: RunState): CarriedState {
  return { cfg, state, decisions: {}, seq: 0, executions: 0 };
}

/**
 * Temporal suggests it (4 MiB or 4,096 events by default) or history passed
 * our own threshold, and this execution has taken at least one turn: a carried
 * state larger than the threshold must not make every execution continue at
 * once, forever. Pure: asks nothing of the history.
 */
export function historyTooLong(turnsThisExecution: number, thresholdBytes: number, info: Pick<wf.WorkflowInfo, 'continueAsNewSuggested' | 'historySize'>): boolean {
  if (turnsThisExecution === 0) return false;
  return info.continueAsNewSuggested || info.historySize >= thresholdBytes;
}

/** What an execution hands the next, besides the run's state (see CarriedState). */
export interface CarryOver {
  ctx: RunContext;
  approvals: Approvals;
  steering: Steering;
  /** This execution's number in the chain (1 for the first). */
  executions: number;
}

/**
 * At a turn boundary: when history is too long, the run continues as new
 * (this never returns), carrying everything the loop knows.
 */
export async function continueAsNewIfDue(c: CarryOver, turnsThisExecution: number): Promise<void> {
  const { ctx } = c;
  const info = wf.workflowInfo();
  if (!historyTooLong(turnsThisExecution, ctx.cfg.continueAsNewAtHistoryBytes, info)) return;
  // Signals and updates in flight finish here, not in limbo between executions;
  // a subscriber's poll answers now and its next lands on the next execution.
  ctx.stream.detach();
  await c.approvals.settleHandlers();
  const now = wf.workflowInfo();
  ctx.trace.emit('continued_as_new', { execution: c.executions + 1, historyLength: now.historyLength, historySize: now.historySize, turns: ctx.state.turns });
  const usedSteerSignatures = ctx.signaturesUsed.carried(Date.now());
  const carried: CarriedState = {
    cfg: ctx.cfg,
    state: ctx.state,
    decisions: c.approvals.rules.decisions,
    seq: ctx.trace.seq,
    executions: c.executions,
    chainId: ctx.ids.chainId,
    ...(c.steering.queue.size > 0 ? { steers: c.steering.queue.carried() } : {}),
    stream: ctx.stream.carried(),
    ...(usedSteerSignatures ? { usedSteerSignatures } : {}),
  };
  await wf.continueAsNew<(input: AgentInput, carried?: CarriedState) => Promise<RunResult>>(ctx.input, carried);
}
