// A person reconciles a write whose outcome is unknown (its attempt claimed the
// call and never reported: a crash, a timeout, a server that stalled). With
// `unknownOutcomes: "ask"` the run parks on such a call instead of telling the
// model "outcome unknown": someone who can look at the world says it happened
// (and what happened), or that it should be tried again. The `reconcile`
// update's handler only records the answer; the loop, where it waits, takes it:
// the run parks until a person answers, its approval timeout passes, or a Stop comes.
import * as wf from '@temporalio/workflow';
import { argsHash } from '../common/args-hash.js';
import type { ReconcileInput } from '../common/run-messages.js';
import type { RunStatusView } from '../common/contract.js';
import { payloadProblem, reconcileAnswerSchema, reconcileCallSchema } from '../common/signal-schemas.js';
import { STOPPING } from './stop.js';
import type { RunContext } from './run-context.js';
import { markSignatureUsed, otherSignatureProblem, updateRefused, type Subject } from './refusals.js';

/** The call a run is parked on, and what the tool could say about it. */
export interface AwaitingReconciliation {
  callId: string;
  /** The call's idempotency key (this occurrence of this call of this run chain): what a signed answer is bound to. */
  callKey: string;
  toolName: string;
  args: unknown;
  /** The tool's own words: who started it, when, and why it did not report. */
  known: string;
}

export type ReconcileAnswer = { outcome: 'happened'; result: string; by: string | null } | { outcome: 'retry'; by: string | null };

export class ReconcileAnswers {
  awaiting: AwaitingReconciliation | null = null;
  private answer: ReconcileAnswer | null = null;

  /** Why an answer is refused, or null. Pure: the update's validator and the handler both ask it. */
  problem(answer: unknown): string | null {
    const malformed = payloadProblem(reconcileCallSchema(), answer);
    if (malformed) return malformed;
    const { callId } = answer as { callId: string };
    if (this.awaiting === null) return `reconcile: no call of this run awaits reconciliation (call ${callId})`;
    if (callId !== this.awaiting.callId) return `reconcile: call ${callId} does not await reconciliation; ${this.awaiting.callId} (${this.awaiting.toolName}) does`;
    const badAnswer = payloadProblem(reconcileAnswerSchema(), answer);
    if (badAnswer) return badAnswer;
    if (this.answer !== null) return `reconcile: call ${callId} already has an answer`;
    return null;
  }

  /** Records an answer the validator accepted. */
  receive(answer: ReconcileInput): void {
    const by = answer.by ?? null;
    this.answer = answer.outcome === 'happened' ? { outcome: 'happened', result: (answer.result ?? '').trim(), by } : { outcome: 'retry', by };
  }

  hasAnswer(): boolean {
    return this.answer !== null;
  }

  /** The answer for the parked call, once; the run is then free to park on the next. */
  take(): ReconcileAnswer | null {
    const a = this.answer;
    this.answer = null;
    this.awaiting = null;
    return a;
  }
}

/** The tool result the model reads once a person said the write happened. */
export function reconciledText(toolName: string, answer: Extract<ReconcileAnswer, { outcome: 'happened' }>): string {
  return `${answer.result}\n(${toolName}: its attempt did not report; ${answer.by ?? 'a person'} checked and confirmed that it happened.)`;
}

/** A write whose outcome is unknown, with `unknownOutcomes: "ask"`: the `reconcile` update's handler and the loop's wait for it. */
export class Reconciler {
  private readonly answers = new ReconcileAnswers();

  constructor(private readonly ctx: RunContext) {}

  /** The `reconcile` update: the answer is recorded; the update answers once the loop has taken it, so the caller sees its effect. */
  async reconcile(answer: ReconcileInput): Promise<RunStatusView> {
    // A signed answer is taken once: sent again for a later parking of the same call, it is refused.
    markSignatureUsed(this.ctx, 'reconcile', answer, this.subject());
    this.answers.receive(answer);
    await wf.condition(() => !this.answers.hasAnswer());
    return this.ctx.visibility.view();
  }

  /** The `reconcile` update's validator. */
  validate(answer: ReconcileInput): void {
    const problem =
      (this.ctx.stop.stopped ? STOPPING : null) ?? this.answers.problem(answer) ?? otherSignatureProblem(this.ctx, 'reconcile', answer, this.subject());
    if (problem) throw updateRefused(problem);
  }

  /** What a signed answer is about: the parked call's occurrence and tool (answers.problem refused any other call first). */
  private subject(): Subject {
    const a = this.answers.awaiting;
    return { callId: a?.callId ?? '', callKey: a?.callKey ?? '', toolName: a?.toolName ?? '' };
  }

  /**
   * Parks the run on the call until a person answers; null when the approval
   * timeout passed first or a Stop came: the model is then told the outcome
   * is unknown.
   */
  async awaitAnswer(req: AwaitingReconciliation): Promise<ReconcileAnswer | null> {
    const { ctx } = this;
    this.answers.awaiting = req;
    ctx.visibility.park({ type: 'reconciliation', ...req });
    ctx.trace.emit('reconciliation_required', { toolName: req.toolName, callId: req.callId, callKey: req.callKey, known: req.known });
    const endNotify = ctx.notify.parked({ event: 'reconciliation_required', callId: req.callId, toolName: req.toolName, argsHash: argsHash(req.args), args: req.args, timeoutMs: ctx.cfg.approvalTimeoutMs });
    const ready = () => this.answers.hasAnswer() || ctx.stop.stopped;
    try {
      if (ctx.cfg.approvalTimeoutMs === null) await wf.condition(ready);
      else await wf.condition(ready, ctx.cfg.approvalTimeoutMs);
    } finally {
      endNotify();
    }
    // Taken even when a Stop came with it, so its update can answer; the Stop wins.
    const taken = this.answers.take();
    const answer = ctx.stop.stopped ? null : taken;
    ctx.trace.emit('reconciliation_decided', { callId: req.callId, outcome: answer?.outcome ?? (ctx.stop.stopped ? 'stopped' : 'timed_out'), by: answer?.by ?? null });
    if (!ctx.stop.stopped) ctx.visibility.unpark();
    return answer;
  }
}
