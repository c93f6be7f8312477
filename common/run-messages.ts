// The message contract of `agentRun` in one place: signal, update and query
// definitions and their payloads, shared by the workflow, the CLI and the
// tests. The names are part of the contract (README, "The contract"): do not rename them.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { StreamWindow } from './stream-items.js';
import type { ChatMessage, RunConfig, RunStatusView } from './contract.js';

/**
 * What a signed decision adds (AGENT_APPROVERS, common/signed-decision.ts):
 * standard base64 Ed25519 `signature` over the canonical JSON of {argsHash,
 * by, callId, callKey, decision, expiresAt, toolName, workflowId};
 * `workflowId`, `callKey` and `toolName` optional in the payload (they name
 * what was signed for). Unsigned decisions leave them out, or name callKey /
 * toolName to bind themselves to one occurrence of one call.
 */
export interface DecisionSignature {
  expiresAt?: string;
  signature?: string;
  workflowId?: string;
  /**
   * What the decision is for, as signed: the call's occurrence (status
   * interruption.callKey) or the run chain (status runKey). On an unsigned
   * decision too, when given: refused unless it names the call awaiting.
   */
  callKey?: string;
  /** The tool of the call decided, as signed ("" for steer and raiseBudget). */
  toolName?: string;
}

export interface ApproveInput extends DecisionSignature {
  callId: string;
  by?: string;
  /** The call's argsHash (status interruption.argsHash): refused when the awaited call's arguments hash otherwise. */
  argsHash?: string;
}

export interface RejectInput extends DecisionSignature {
  callId: string;
  reason?: string;
  by?: string;
  argsHash?: string;
}

export interface CancelInput {
  reason?: string;
}

export interface DecideInput extends DecisionSignature {
  callId: string;
  decision: 'approve' | 'reject';
  reason?: string;
  by?: string;
  argsHash?: string;
}

/**
 * A user message for the run, taken at its next turn boundary (never between
 * a tool call and its result). `interrupt`: calls of the current reply that
 * have not started, and the call parked on an approval, are not run.
 */
export interface SteerInput extends DecisionSignature {
  message: string;
  by?: string;
  interrupt?: boolean;
}

/** A hard budget's raise: refused unless higher than the budget now (the contract). */
export interface RaiseBudgetInput extends DecisionSignature {
  maxBudgetUsd: number;
  by: string;
  reason?: string;
}

export interface ReconcileInput extends DecisionSignature {
  callId: string;
  /** `happened`: the write took place (say what happened in `result`); `retry`: try it again. */
  outcome: 'happened' | 'retry';
  result?: string;
  by?: string;
}

export const approveSignal = defineSignal<[ApproveInput]>('approve');
export const rejectSignal = defineSignal<[RejectInput]>('reject');
export const cancelSignal = defineSignal<[CancelInput]>('cancel');
export const decideUpdate = defineUpdate<RunStatusView, [DecideInput]>('decide');
/** Answers once the message is queued (its place shows in queuedSteers), not when it is applied. */
export const steerUpdate = defineUpdate<RunStatusView, [SteerInput]>('steer');
export const steerSignal = defineSignal<[SteerInput]>('steer');
export const raiseBudgetUpdate = defineUpdate<RunStatusView, [RaiseBudgetInput]>('raiseBudget');
export const reconcileUpdate = defineUpdate<RunStatusView, [ReconcileInput]>('reconcile');
export const statusQuery = defineQuery<RunStatusView>('status');
export const transcriptQuery = defineQuery<ChatMessage[]>('transcript');
/** The run's resolved configuration (every default filled in): what a resume or a fork carries on. */
export const configQuery = defineQuery<RunConfig>('config');
/**
 * The live stream's window from an offset, answered also once the run has
 * closed (a worker replays it): how a subscriber reads the last items after
 * the run ended, and what a late one can still see (common/stream-items.ts).
 */
export const streamItemsQuery = defineQuery<StreamWindow, [number, number?]>('streamItems');
