// The message contract of `agentRun` in one place: signal, update and query
// definitions and their payloads, shared by the workflow, the CLI and the
// tests. The names are part of CONTRACT.md: do not rename them.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChatMessage, RunConfig, RunStatusView } from '../common/contract';

export interface ApproveInput {
  callId: string;
  by?: string;
}

export interface RejectInput {
  callId: string;
  reason?: string;
  by?: string;
}

export interface CancelInput {
  reason?: string;
}

export interface DecideInput {
  callId: string;
  decision: 'approve' | 'reject';
  reason?: string;
  by?: string;
}

export interface ReconcileInput {
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
export const reconcileUpdate = defineUpdate<RunStatusView, [ReconcileInput]>('reconcile');
export const statusQuery = defineQuery<RunStatusView>('status');
export const transcriptQuery = defineQuery<ChatMessage[]>('transcript');
/** The run's resolved configuration (every default filled in): what a resume or a fork carries on. */
export const configQuery = defineQuery<RunConfig>('config');
