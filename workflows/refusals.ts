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
import { checkSignature, listedFor, signatureProblem, signedArgsOf, type OtherDecision } from '../common/signed-decision.js';
import type { SignatureCheck } from './approval-rules.js';
import type { RunContext, RunIds } from './run-context.js';

/** The approve/reject check for the approval rules, or undefined when the run has no policy. */
export function approvalSignatureCheck(cfg: RunConfig): SignatureCheck | undefined {
  const policy = cfg.approvers;
  if (!policy) return undefined;
  return (call, input, verdict) => {
    const listed = listedFor(policy, { tool: call.toolName });
    if (listed === null) return null;
    // call.key is the call's idempotency key: this occurrence of this call of this run chain.
    const expected = { argsHash: call.argsHash, callId: call.callId, callKey: call.key, decision: verdict, toolName: call.toolName, workflowId: wf.workflowInfo().workflowId };
    return signatureProblem(policy, listed, `tool ${call.toolName}`, expected, input, Date.now(), cfg.approversSource);
  };
}

/**
 * The run chain as a signature names it: `<workflowId>@<first execution's run
 * id>`, the status query's runKey. A workflow id used again after its run
 * ended starts another chain; continue-as-new and reset keep it (a reset run
 * finds the effects of the run it resets, ./start.ts).
 */
export function runKeyOf(ids: RunIds): string {
  return `${ids.workflowId}@${ids.effectsChainId}`;
}

/** What a raiseBudget / steer / reconcile is about: the run (steer, raiseBudget) or the parked call (reconcile). */
export interface Subject {
  callId: string;
  callKey: string;
  toolName: string;
}

/**
 * Why a raiseBudget / reconcile / steer is refused by the policy, or null
 * (no policy, or the decision is not listed). Its argsHash covers the
 * update's own fields (signedArgsOf): the signed amount, outcome or message
 * is the one applied; its callKey the run chain (steer, raiseBudget) or the
 * parked call's occurrence (reconcile). A signature taken once is refused
 * when it comes again (in any encoding: it is looked up by the signed
 * message). `subject` defaults to the run itself.
 */
export function otherSignatureProblem(ctx: RunContext, decision: OtherDecision, input: unknown, subject?: Subject): string | null {
  const v = otherSignature(ctx, decision, input, subject);
  if (v === null) return null;
  if (!v.ok) return v.problem;
  if (!ctx.signaturesUsed.has(v.messageKey)) return null;
  const { by, expiresAt } = input as Record<string, unknown>;
  return `signature already used: this signed ${decision} by ${JSON.stringify(by)} (expires ${String(expiresAt)}) was taken once; sign it again to send it again`;
}

/**
 * Remembers a signed raiseBudget / reconcile / steer its handler takes, so
 * the same one is refused from now on. Nothing when the policy does not list
 * the decision. Call only after otherSignatureProblem said null.
 */
export function markSignatureUsed(ctx: RunContext, decision: OtherDecision, input: unknown, subject?: Subject): void {
  const v = otherSignature(ctx, decision, input, subject);
  if (v?.ok) ctx.signaturesUsed.add(v.messageKey, String((input as Record<string, unknown>).expiresAt), Date.now());
}

function otherSignature(ctx: RunContext, decision: OtherDecision, input: unknown, subject?: Subject): ReturnType<typeof checkSignature> | null {
  const policy: RunConfig['approvers'] = ctx.cfg.approvers;
  const listed = listedFor(policy, { decision });
  if (!policy || listed === null) return null;
  const about = subject ?? { callId: '', callKey: runKeyOf(ctx.ids), toolName: '' };
  const expected = { argsHash: argsHash(signedArgsOf(input)), decision, workflowId: ctx.ids.workflowId, ...about };
  return checkSignature(policy, listed, decision, expected, input, Date.now(), ctx.cfg.approversSource);
}

export const UPDATE_REFUSED = 'UpdateRefused';

export function updateRefused(problem: string): wf.ApplicationFailure {
  return wf.ApplicationFailure.create({ type: UPDATE_REFUSED, message: problem, nonRetryable: true });
}
