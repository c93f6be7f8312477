// How a run ends: the Exit type and one constructor per kind of exit (every
// exit of the run is built here), an error thrown out of the loop mapped to
// an exit (a Stop, a failed activity or child, a non-retryable failure), and
// the exit with the run's totals as the workflow's result. Only Temporal's
// failure types are used here, no workflow API.
import * as wf from '@temporalio/workflow';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure } from '@temporalio/workflow';
import type { Interruption, PartialReply, RunResult } from '../common/contract.js';
import type { RunState } from './run-state.js';

/**
 * How a run ends, one shape per status: a completed run has an answer and no
 * interruption, a failed one an error and its type, a stopped one says what
 * stopped it. `reason` is one line for people (the trace's run_stopped, the CLI).
 */
export type Exit =
  /** `structuredOutput`: the answer parsed, when the run has an outputSchema. */
  | { status: 'completed'; interruption: null; reason: string; output: string; structuredOutput?: unknown }
  /** errorType, for alerting: ProviderUnauthorized, PermanentToolError, ProtocolError, … */
  | { status: 'failed'; interruption: null; reason: string; error: string; errorType: string }
  | { status: 'max_turns_exceeded'; interruption: { type: 'max_turns' }; reason: string }
  | { status: 'budget_exceeded'; interruption: { type: 'max_budget' }; reason: string }
  | { status: 'interrupted'; interruption: Extract<Interruption, { type: 'approval' | 'cancelled' }>; reason: string };

/** The result fields an exit fills: an answer for `completed`, an error and its type for `failed`, nulls otherwise. */
export function exitFields(exit: Exit): { output: string | null; error: string | null; errorType: string | null } {
  if (exit.status === 'completed') return { output: exit.output, error: null, errorType: null };
  if (exit.status === 'failed') return { output: null, error: exit.error, errorType: exit.errorType };
  return { output: null, error: null, errorType: null };
}

/** A run whose model answered: `output` is the answer. */
export function completedExit(reason: string, output: string): Exit {
  return { status: 'completed', interruption: null, reason, output };
}

/** A run whose final answer is JSON valid against its outputSchema: the text, and the value. */
export function structuredExit(reason: string, output: string, structuredOutput: unknown): Exit {
  return { status: 'completed', interruption: null, reason, output, structuredOutput };
}

/** A failed run; `error` defaults to the reason (most failures say one thing twice: to people and in the result). */
export function failedExit(reason: string, errorType: string, error: string = reason): Exit {
  return { status: 'failed', interruption: null, reason, error, errorType };
}

/** The turn cap stopped the run. */
export function turnCapExit(reason: string): Exit {
  return { status: 'max_turns_exceeded', interruption: { type: 'max_turns' }, reason };
}

/** The budget stopped the run (soft: spent; hard: nothing left to hold for a call). */
export function budgetExit(reason: string): Exit {
  return { status: 'budget_exceeded', interruption: { type: 'max_budget' }, reason };
}

/** No decision came for a call within the approval timeout: the run ends parked on it. */
export function approvalExit(call: { callId: string; toolName: string; args: unknown; argsHash: string }, reason: string): Exit {
  return { status: 'interrupted', interruption: { type: 'approval', callId: call.callId, toolName: call.toolName, args: call.args, argsHash: call.argsHash }, reason };
}

/** The reason of a Stop that came without one: Temporal's own cancellation. */
export const CANCELLED = 'the workflow was cancelled';

/** The exit of a stopped run; `reason`: what the cancel signal said, if it came. */
export function cancelledExit(reason: string | null, partialReply?: PartialReply): Exit {
  const why = reason ?? CANCELLED;
  return { status: 'interrupted', interruption: { type: 'cancelled', reason: why, ...(partialReply ? { partialReply } : {}) }, reason: why };
}

/** `cancelReason`: what the cancel signal said, if it came. Rethrows what is a bug in this code. */
export function exitForError(err: unknown, cancelReason: string | null): Exit {
  if (wf.isCancellation(err)) return cancelledExit(cancelReason);
  if (err instanceof ActivityFailure || err instanceof ChildWorkflowFailure) {
    const msg = `${err.message}: ${err.cause?.message ?? 'unknown cause'}`;
    // The failure's type (ProviderUnauthorized, ProviderBadRequest, …) travels with the result, for alerting.
    const errorType = err.cause instanceof ApplicationFailure && err.cause.type ? err.cause.type : err instanceof ChildWorkflowFailure ? 'ChildWorkflowFailed' : 'ActivityFailed';
    return failedExit(msg, errorType, err.cause?.message ?? err.message);
  }
  if (err instanceof ApplicationFailure) {
    return failedExit(err.message, err.type ?? 'ApplicationFailure');
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
    ...(exit.status === 'completed' && 'structuredOutput' in exit ? { structuredOutput: exit.structuredOutput } : {}),
    turns: state.turns,
    toolRuns: state.toolRuns,
    costUsd: state.costUsd,
    usage: { ...state.usage },
    usageEstimatedTurns: state.usageEstimatedTurns,
    promptTokensPerTurn: [...state.promptTokensPerTurn],
    children: state.children,
  };
}
