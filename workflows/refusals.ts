// Why a decision update is refused, and how the refusal reaches its sender.
//
// The run's approvers policy as workflow code applies it. The policy was
// recorded in the run's configuration at start (activities/resolve-config.ts),
// so a replay, a later worker with another AGENT_APPROVERS, and the next
// execution after continue-as-new all decide as the run did; a run whose
// configuration has none (started before the policy) takes decisions
// unsigned, as ever. Time is the workflow's clock (deterministic on replay).
//
// What a validator throws when it refuses: a plain Error reached the
// `temporal` CLI and the Web UI labelled "type: Error, retryable: true", as if
// sending the same update again might work. A refusal is a decision, not a
// fault: typed and not retryable, with the same message. Validators do not
// run on replay and a refused update leaves nothing in history, so this
// changes no recorded run.
import * as wf from '@temporalio/workflow';
import type { RunConfig } from '../common/contract.js';
import { argsHash } from '../common/args-hash.js';
import { listedFor, signatureProblem, signedArgsOf, type OtherDecision } from '../common/signed-decision.js';
import type { SignatureCheck } from './approval-rules.js';

/** The approve/reject check for the approval rules, or undefined when the run has no policy. */
export function approvalSignatureCheck(cfg: RunConfig): SignatureCheck | undefined {
  const policy = cfg.approvers;
  if (!policy) return undefined;
  return (call, input, verdict) => {
    const listed = listedFor(policy, { tool: call.toolName });
    if (listed === null) return null;
    const expected = { argsHash: call.argsHash, callId: call.callId, decision: verdict, workflowId: wf.workflowInfo().workflowId };
    return signatureProblem(policy, listed, `tool ${call.toolName}`, expected, input, Date.now());
  };
}

/**
 * Why a raiseBudget / reconcile / steer is refused by the policy, or null
 * (no policy, or the decision is not listed). Its argsHash covers the
 * update's own fields (signedArgsOf): the signed amount, outcome or message
 * is the one applied.
 */
export function otherSignatureProblem(cfg: RunConfig, decision: OtherDecision, input: unknown, callId = ''): string | null {
  const policy = cfg.approvers;
  const listed = listedFor(policy, { decision });
  if (!policy || listed === null) return null;
  const expected = { argsHash: argsHash(signedArgsOf(input)), callId, decision, workflowId: wf.workflowInfo().workflowId };
  return signatureProblem(policy, listed, decision, expected, input, Date.now());
}

export const UPDATE_REFUSED = 'UpdateRefused';

export function updateRefused(problem: string): wf.ApplicationFailure {
  return wf.ApplicationFailure.create({ type: UPDATE_REFUSED, message: problem, nonRetryable: true });
}
