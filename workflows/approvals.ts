// Approvals as the run sees them: a call whose tool needs approval parks the
// run until a person decides (`approve` / `reject` signals, the `decide`
// update), its approval timeout passes, a steer with `interrupt` declines it,
// or a Stop comes. Handlers only enqueue decisions (PendingDecisions, below);
// they are applied where the loop waits, so a replay takes the same path
// whatever order the activation's jobs come in. ./approval-rules.ts checks them.
//
// Approve and reject decisions, from the moment their handler receives them
// to the moment they are applied. A decision is not applied in its handler
// but when the loop waits for one
// (Approvals.decisionOrTimeout drains them; its condition only looks), or when the run
// ends. Within one workflow task, a signal and the model reply that proposes
// its call can reach the workflow in one activation (the signal's handler runs
// first, before the reply) or in two (the reply first: a worker had run ahead
// of history — a query answered from a replay filled its cache — and the task
// then brought only the signal). Applied where the loop waits, a decision
// meets the parked call either way, and a replay takes the path the first
// execution took. It counts only within the workflow task it arrived in: a
// call proposed in a later task is never decided blind.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import { argsHash } from '../common/args-hash.js';
import type { RunStatusView, ToolName } from '../common/contract.js';
import type { ApproveInput, DecideInput, RejectInput } from '../common/run-messages.js';
import type { Decision } from '../common/transcript-text.js';
import { recordDeclined } from './call-results.js';
import { ApprovalRules, type AwaitingApproval } from './approval-rules.js';
import { approvalSignatureCheck, updateRefused } from './refusals.js';
import { STOPPING } from './stop.js';
import type { TraceEventType } from './trace.js';
import { approvalExit, type Exit } from './exits.js';
import type { RunContext } from './run-context.js';
import type { Steering } from './steering.js';
import type { PendingCall } from './tool-calls.js';

/** What an approval check lets through: the call runs ('go'), or the loop returns this (an exit, or null: declined, go on). */
export type ApprovalOutcome = 'go' | Exit | null;

export class Approvals {
  readonly rules: ApprovalRules;
  private readonly pending: PendingDecisions;

  constructor(
    private readonly ctx: RunContext,
    private readonly steering: Steering,
    /** Decisions by idempotency key, carried across continue-as-new. */
    carried: Record<string, Decision>,
  ) {
    this.rules = new ApprovalRules(carried, approvalSignatureCheck(ctx.cfg));
    this.pending = new PendingDecisions(this.rules, (type, fields) => ctx.trace.emit(type, fields), () => ctx.stop.stopped);
  }

  /** The `approve` signal: only received here; applied where the loop waits. */
  approve(approval: ApproveInput): void {
    this.pending.receive({ signal: 'approve', input: approval, verdict: 'approve' });
  }

  /** The `reject` signal: only received here; applied where the loop waits. */
  reject(rejection: RejectInput): void {
    this.pending.receive({ signal: 'reject', input: rejection, verdict: 'reject' });
  }

  /** The `decide` update: answers once its decision was applied, with the run's status, or says why it was refused. */
  async decide(decision: DecideInput): Promise<RunStatusView> {
    const { ctx } = this;
    const ticket: Ticket = { done: false, taken: null, problem: null };
    this.pending.receive({ signal: 'decide', input: decision, verdict: decision.decision, ticket });
    await wf.condition(() => ticket.done);
    // Accepted, then refused when applied (the state moved between the two): the caller learns why.
    if (ticket.problem !== null) throw ApplicationFailure.create({ type: 'DecisionRefused', message: ticket.problem, nonRetryable: true });
    // Answer once the loop has taken the decision, so the caller sees its effect.
    await wf.condition(() => this.rules.awaiting?.key !== ticket.taken);
    return ctx.visibility.view();
  }

  /** Whether the call parked now has a decision, taken or received and not applied yet (a steer's interrupt comes after it). */
  hasDecision(callId: string): boolean {
    const parked = this.rules.awaiting;
    return (parked?.callId === callId && this.rules.decisions[parked.key] !== undefined) || this.pending.pendingFor(callId) !== null;
  }

  /** The `decide` update's validator. Refused updates leave no trace in history: the caller learns at once. */
  validateDecide(decision: DecideInput): void {
    const problem = (this.ctx.stop.stopped ? STOPPING : null) ?? this.rules.problem(decision, decision?.decision) ?? this.pending.pendingFor(decision?.callId);
    if (problem) throw updateRefused(problem);
  }

  /**
   * A call whose tool needs approval: parks until it is decided. Approval
   * comes before the dedupe cache: a cached result never stands in for a
   * decision. A rejection is written into the transcript with its reason.
   */
  async check(pending: PendingCall, toolName: ToolName, args: Record<string, unknown>, key: string): Promise<ApprovalOutcome> {
    const { ctx } = this;
    const { call } = pending;
    if (ctx.stop.stopped) return ctx.stop.exit();
    const hash = argsHash(args);
    const hashRequired = ctx.cfg.requireArgsHash?.includes(toolName) ?? false;
    const decision = await this.awaitDecision({ key, callId: call.id, toolName, args, argsHash: hash, hashRequired });
    if (decision === null) {
      return approvalExit({ callId: call.id, toolName, args, argsHash: hash }, `no decision on ${toolName} call ${call.id} within ${ctx.cfg.approvalTimeoutMs} ms`);
    }
    if (decision.decision === 'approve') return 'go';
    recordDeclined(ctx, call, toolName, decision, { empty: ctx.cfg.experimentalEmptyRejection === true });
    return null;
  }

  /** The decision a call got (the Web UI names who approved it). */
  decisionOf(key: string): Decision | null {
    return this.rules.decisions[key] ?? null;
  }

  /** The run ends: nothing awaits a decision any more, and decisions received and not applied are refused, on record. */
  close(): void {
    this.rules.awaiting = null;
    this.pending.drain();
  }

  /**
   * Waits until every signal and update handler is done (before the run ends
   * or continues as new). Decisions still pending are applied (or
   * refused) first, so their updates can answer.
   */
  async settleHandlers(): Promise<void> {
    for (;;) {
      this.pending.drain();
      if (wf.allHandlersFinished()) return;
      await wf.condition(() => this.pending.hasPending() || wf.allHandlersFinished());
    }
  }

  /** Parks the run until a person decides; null when the approval timeout passed first. */
  private async awaitDecision(req: AwaitingApproval): Promise<Decision | null> {
    const { ctx } = this;
    const { decisions } = this.rules;
    const known = decisions[req.key];
    if (known) return known;
    this.rules.awaiting = req;
    ctx.visibility.park({ type: 'approval', callId: req.callId, toolName: req.toolName, args: req.args, argsHash: req.argsHash, callKey: req.key });
    ctx.trace.emit('approval_required', { toolName: req.toolName, args: req.args, callId: req.callId, argsHash: req.argsHash, callKey: req.key, ...(req.hashRequired ? { argsHashRequired: true } : {}) });
    ctx.metrics.approvalsRequested.add(1, { tool: req.toolName });
    const parkedAt = Date.now();
    const escalate = ctx.cfg.approvalEscalateAfterMs;
    const endNotify = ctx.notify.parked({
      event: 'approval_required',
      callId: req.callId,
      toolName: req.toolName,
      argsHash: req.argsHash,
      args: req.args,
      timeoutMs: ctx.cfg.approvalTimeoutMs,
      ...(escalate !== undefined ? { escalateAfterMs: escalate } : {}),
    });
    try {
      await this.decisionOrTimeout(req.key);
    } finally {
      // Decided, timed out or stopped: the notification and the escalation timer are over.
      endNotify();
    }
    this.rules.awaiting = null;
    const decision = decisions[req.key] ?? this.rejectForInterrupt(req);
    if (decision) {
      ctx.metrics.approvalsDecided.add(1, { tool: req.toolName, decision: decision.decision });
      ctx.metrics.approvalWaitMs.record(Math.max(0, Date.now() - parkedAt), { tool: req.toolName });
      ctx.visibility.unpark();
    }
    return decision;
  }

  /**
   * A steer with `interrupt` reached the parked call before any decision: the
   * call is rejected with the message as the reason, and the message is due
   * at the boundary that follows (the steer has acted).
   */
  private rejectForInterrupt(req: AwaitingApproval): Decision | null {
    const s = this.steering.queue.anyInterrupt();
    if (!s) return null;
    s.acted = true;
    const decision: Decision = { callId: req.callId, decision: 'reject', reason: s.message, by: s.by, interrupt: true };
    this.rules.decisions[req.key] = decision;
    this.ctx.trace.emit('approval_decided', { toolName: req.toolName, ...decision });
    return decision;
  }

  /**
   * Waits until the call has a decision or the approval timeout passes. The
   * condition itself only looks; decisions are applied by draining the pending ones
   * here. The timer is started once for the whole wait, as
   * wf.condition(fn, timeout) would: the same commands either way.
   */
  private async decisionOrTimeout(key: string): Promise<void> {
    // A steer with `interrupt` ends the wait too (an explicit decision that came with it is taken first).
    const decided = () => this.rules.decisions[key] !== undefined || this.steering.queue.anyInterrupt() !== null;
    const untilDecided = async () => {
      for (;;) {
        this.pending.drain();
        if (decided()) return;
        // decided(): a steer's interrupt ends the wait without a pending decision.
        await wf.condition(() => this.pending.hasPending() || decided());
      }
    };
    const timeout = this.ctx.cfg.approvalTimeoutMs;
    if (timeout === null) return untilDecided();
    await wf.CancellationScope.cancellable(async () => {
      try {
        await Promise.race([wf.sleep(timeout), untilDecided()]);
      } finally {
        wf.CancellationScope.current().cancel();
      }
    });
  }
}

export type DecisionSignal = 'approve' | 'reject' | 'decide';

/** A decide update's answer: whether its decision was applied, to which call, or why not. */
export interface Ticket {
  done: boolean;
  taken: string | null;
  problem: string | null;
}

export interface ReceivedDecision {
  signal: DecisionSignal;
  input: unknown;
  verdict: unknown;
  ticket?: Ticket;
}

type Outcome = { ok: true; key: string } | { ok: false; problem: string };

export class PendingDecisions {
  /** `at`: the history length of the workflow task each arrived in. */
  private readonly pending: (ReceivedDecision & { at: number })[] = [];

  constructor(
    private readonly rules: ApprovalRules,
    private readonly emit: (type: TraceEventType, fields: Record<string, unknown>) => void,
    /** A Stop was taken: no decision is applied after it (the call it would run never starts). */
    private readonly stopped: () => boolean = () => false,
  ) {}

  /** Decisions received and not applied yet. */
  hasPending(): boolean {
    return this.pending.length > 0;
  }

  receive(m: ReceivedDecision): void {
    this.pending.push({ ...m, at: wf.workflowInfo().historyLength });
  }

  /** Applies the decisions received so far, in arrival order. */
  drain(): void {
    for (const m of this.pending.splice(0)) this.apply(m);
  }

  /** A decision received for this call and not applied yet: the first decision is final, so a second is refused at once. */
  pendingFor(callId: unknown): string | null {
    const first = this.pending.find((m) => (m.input as { callId?: unknown } | null)?.callId === callId);
    return first ? `already decided: call ${JSON.stringify(callId)} has a decision being applied; the first decision is final` : null;
  }

  private apply(m: ReceivedDecision & { at: number }): void {
    const stale = m.at !== wf.workflowInfo().historyLength;
    const outcome = this.stopped()
      ? this.refuse(m.signal, m.input, { problem: STOPPING, reason: STOPPING })
      : stale
        ? this.refuse(m.signal, m.input, this.staleProblem(m.input))
        : this.decide(m.signal, m.input, m.verdict);
    if (m.ticket) {
      m.ticket.taken = outcome.ok ? outcome.key : null;
      m.ticket.problem = outcome.ok ? null : outcome.problem;
      m.ticket.done = true;
    }
  }

  /** Why a decision applied after its workflow task is refused: the call was decided already, or none awaited one then. */
  private staleProblem(input: unknown): { problem: string; reason: string } {
    const callId = (input as { callId?: unknown } | null)?.callId;
    const decided = typeof callId === 'string' ? this.rules.alreadyDecided(callId) : null;
    if (decided) return { problem: decided, reason: decided };
    const problem = 'no call was awaiting a decision when it arrived';
    return { problem, reason: `${problem} (got callId ${JSON.stringify(callId ?? null)})` };
  }

  private refuse(signal: DecisionSignal, input: unknown, why: { problem: string; reason: string }): Outcome {
    const callId = (input as { callId?: unknown } | null)?.callId ?? null;
    this.emit('signal_ignored', { signal, callId, reason: why.reason });
    return { ok: false, problem: why.problem };
  }

  /** Takes a decision for the awaited call, or refuses it (traced as signal_ignored). */
  private decide(signal: DecisionSignal, input: unknown, verdict: unknown): Outcome {
    const taken = this.rules.take(input, verdict);
    if (!taken.ok) {
      const callId = (input as { callId?: unknown } | null)?.callId ?? null;
      this.emit('signal_ignored', { signal, callId, reason: taken.problem });
      return { ok: false, problem: taken.problem };
    }
    this.emit('approval_decided', { callId: taken.call.callId, toolName: taken.call.toolName, ...taken.decision });
    return { ok: true, key: taken.call.key };
  }
}
