// When a run continues as new, and what it carries. Long runs would otherwise
// grow history with the square of their turns (each model call stores the
// whole transcript again) until Temporal's limits stop them. What one
// execution hands the next (CarriedState, the loop's state as plain JSON,
// versioned) is in ./carried-state.ts, which reads it back at the next start.
import * as wf from '@temporalio/workflow';
import type { AgentInput, RunResult } from '../common/contract.js';
import type { Approvals } from './approvals.js';
import { CARRIED_STATE_VERSION, type CarriedState } from './carried-state.js';
import type { RunContext } from './run-context.js';
import type { Steering } from './steering.js';

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

/** At a turn boundary: whether this execution's history is long enough that the run continues as new now. */
export function continueAsNewDue(ctx: Pick<RunContext, 'cfg'>, turnsThisExecution: number): boolean {
  return historyTooLong(turnsThisExecution, ctx.cfg.continueAsNewAtHistoryBytes, wf.workflowInfo());
}

/**
 * The run continues as new (this never returns), carrying everything the loop
 * knows. Called at a turn boundary once continueAsNewDue says so: the check
 * is apart so that a turn that does not continue makes no promise for it
 * (the loop's note on promises, ./agent-run.ts).
 */
export async function continueAsNew(c: CarryOver): Promise<never> {
  const { ctx } = c;
  // Signals and updates in flight finish here, not in limbo between executions;
  // a subscriber's poll answers now and its next lands on the next execution.
  ctx.stream.detach();
  await c.approvals.settleHandlers();
  const now = wf.workflowInfo();
  ctx.trace.emit('continued_as_new', { execution: c.executions + 1, historyLength: now.historyLength, historySize: now.historySize, turns: ctx.state.turns });
  const carried: CarriedState = {
    version: CARRIED_STATE_VERSION,
    cfg: ctx.cfg,
    state: ctx.state,
    decisions: c.approvals.rules.decisions,
    seq: ctx.trace.seq,
    executions: c.executions,
    chainId: ctx.ids.chainId,
    steers: c.steering.queue.size > 0 ? c.steering.queue.carried() : [],
    stream: ctx.stream.carried(),
    usedSteerSignatures: ctx.signaturesUsed.carried(Date.now()) ?? {},
  };
  // The run's own second argument, outside agentRun's exported signature (./agent-run.ts).
  return wf.continueAsNew<(input: AgentInput, carried: CarriedState) => Promise<RunResult>>(ctx.input, carried);
}
