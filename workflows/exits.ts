// How a run's end becomes its result: an error thrown out of the loop mapped
// to an exit (a Stop, a failed activity or child, a non-retryable failure),
// and the exit with the run's totals as the workflow's result.
import * as wf from '@temporalio/workflow';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure } from '@temporalio/workflow';
import type { RunResult } from '../common/contract.js';
import { exitFields, type Exit } from './next-step.js';
import { noChildren, type RunState } from './run-state.js';

/** The reason of a Stop that came without one: Temporal's own cancellation. */
export const CANCELLED = 'the workflow was cancelled';

/** The exit of a stopped run; `reason`: what the cancel signal said, if it came. */
export function cancelledExit(reason: string | null): Exit {
  const why = reason ?? CANCELLED;
  return { status: 'interrupted', interruption: { type: 'cancelled', reason: why }, reason: why };
}

/** `cancelReason`: what the cancel signal said, if it came. Rethrows what is a bug in this code. */
export function exitForError(err: unknown, cancelReason: string | null): Exit {
  if (wf.isCancellation(err)) return cancelledExit(cancelReason);
  if (err instanceof ActivityFailure || err instanceof ChildWorkflowFailure) {
    const msg = `${err.message}: ${err.cause?.message ?? 'unknown cause'}`;
    // The failure's type (ProviderUnauthorized, ProviderBadRequest, …) travels with the result, for alerting.
    const errorType = err.cause instanceof ApplicationFailure && err.cause.type ? err.cause.type : err instanceof ChildWorkflowFailure ? 'ChildWorkflowFailed' : 'ActivityFailed';
    return { status: 'failed', interruption: null, reason: msg, error: err.cause?.message ?? err.message, errorType };
  }
  if (err instanceof ApplicationFailure) {
    return { status: 'failed', interruption: null, reason: err.message, error: err.message, errorType: err.type ?? 'ApplicationFailure' };
  }
  // Anything else is a bug in this code: fail the workflow task so a fixed
  // worker can replay and continue, instead of recording a wrong result.
  throw err;
}

export const isCancelledExit = (exit: Exit): boolean => exit.status === 'interrupted' && exit.interruption.type === 'cancelled';

/** `runId`: the workflow id under the name results were published with (the contract); `workflowId`: the same. */
export function runResult(workflowId: string, exit: Exit, state: RunState): RunResult {
  return {
    runId: workflowId,
    workflowId,
    status: exit.status,
    agentStatus: exit.status,
    reason: exit.reason,
    interruption: exit.interruption,
    ...exitFields(exit),
    turns: state.turns,
    toolRuns: state.toolRuns,
    costUsd: state.costUsd,
    usage: { ...state.usage },
    usageEstimatedTurns: state.usageEstimatedTurns ?? 0,
    promptTokensPerTurn: [...state.promptTokensPerTurn],
    children: state.children ?? noChildren(),
  };
}
