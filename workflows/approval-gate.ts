// Approvals as the run sees them: a call whose tool needs approval parks the
// run until a person decides (`approve` / `reject` signals, the `decide`
// update), its approval timeout passes, a steer with `interrupt` declines it,
// or a Stop comes. Handlers only enqueue decisions (./decision-inbox.ts); they
// are applied here, where the loop waits, so a replay takes the same path
// whatever order the activation's jobs come in. ./approvals.ts checks them.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import { argsHash } from '../common/args-hash.js';
import type { ToolName } from '../common/contract.js';
import { approveSignal, decideUpdate, rejectSignal } from '../common/run-messages.js';
import { declinedText, toolResultMessage, type Decision } from '../common/transcript-text.js';
import { ApprovalDesk, type AwaitingApproval } from './approvals.js';
import { approvalSignatureCheck } from './signatures.js';
import { DecisionInbox, type Ticket } from './decision-inbox.js';
import { STOPPING } from './stop.js';
import { approvalExit, type Exit } from './exits.js';
import type { RunContext } from './run-context.js';
import type { SteeringDesk } from './steering-desk.js';
import type { PendingCall } from './tool-calls.js';
import { updateRefused } from './update-refusal.js';

/** What the gate lets through: the call runs ('go'), or the loop returns this (an exit, or null: declined, go on). */
export type GateOutcome = 'go' | Exit | null;

export class ApprovalGate {
  readonly desk: ApprovalDesk;
  private readonly inbox: DecisionInbox;

  constructor(
    private readonly ctx: RunContext,
    private readonly steering: SteeringDesk,
    /** Decisions by idempotency key, carried across continue-as-new. */
    carried: Record<string, Decision>,
  ) {
    this.desk = new ApprovalDesk(carried, approvalSignatureCheck(ctx.cfg));
    this.inbox = new DecisionInbox(this.desk, ctx.patches.deferredSignals, (type, fields) => ctx.trace.emit(type, fields), () => ctx.stop.stopped);
  }

  registerSignals(): void {
    wf.setHandler(approveSignal, (input) => this.inbox.receive({ signal: 'approve', input, verdict: 'approve' }));
    wf.setHandler(rejectSignal, (input) => this.inbox.receive({ signal: 'reject', input, verdict: 'reject' }));
  }

  registerUpdate(): void {
    const { ctx } = this;
    wf.setHandler(
      decideUpdate,
      async (input) => {
        const key = this.desk.awaiting?.key;
        const ticket: Ticket = { done: false, taken: null, problem: null };
        this.inbox.receive({ signal: 'decide', input, verdict: input.decision, ticket });
        await wf.condition(() => ticket.done);
        // Accepted, then refused when applied (the state moved between the two): the caller learns why.
        if (ctx.patches.deferredSignals && ticket.problem !== null) throw ApplicationFailure.create({ type: 'DecisionRefused', message: ticket.problem, nonRetryable: true });
        // Answer once the loop has taken the decision, so the caller sees its effect.
        const taken = ctx.patches.deferredSignals ? ticket.taken : key;
        await wf.condition(() => this.desk.awaiting?.key !== taken);
        return ctx.board.view();
      },
      {
        // Refused updates leave no trace in history: the caller learns at once.
        validator: (input) => {
          const problem = (ctx.stop.stopped ? STOPPING : null) ?? this.desk.problem(input, input?.decision) ?? this.inbox.pendingFor(input?.callId);
          if (problem) throw updateRefused(problem);
        },
      },
    );
  }

  /**
   * A call whose tool needs approval: parks until it is decided. Approval
   * comes before the dedupe cache: a cached result never stands in for a
   * decision. A rejection is written into the transcript with its reason.
   */
  async check(pending: PendingCall, toolName: ToolName, args: Record<string, unknown>, key: string): Promise<GateOutcome> {
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
    const text = ctx.cfg.experimentalEmptyRejection ? '' : declinedText(toolName, decision);
    ctx.state.messages.push(toolResultMessage(call, text));
    ctx.trace.emit('tool_result', { toolName, callId: call.id, ms: 0, ok: false, declined: true });
    ctx.metrics.toolErrors.add(1, { tool: toolName, kind: 'declined' });
    return null;
  }

  /** The decision a call got (the Web UI names who approved it). */
  decisionOf(key: string): Decision | null {
    return this.desk.decisions[key] ?? null;
  }

  /** The run ends: nothing awaits a decision any more, and decisions received and not applied are refused, on record. */
  close(): void {
    this.desk.awaiting = null;
    this.inbox.drain();
  }

  /**
   * Waits until every signal and update handler is done (before the run ends
   * or continues as new). Decisions still in the inbox are applied (or
   * refused) first, so their updates can answer.
   */
  async settleHandlers(): Promise<void> {
    for (;;) {
      this.inbox.drain();
      if (wf.allHandlersFinished()) return;
      await wf.condition(() => this.inbox.hasPending() || wf.allHandlersFinished());
    }
  }

  /** Parks the run until a person decides; null when the approval timeout passed first. */
  private async awaitDecision(req: AwaitingApproval): Promise<Decision | null> {
    const { ctx } = this;
    const { decisions } = this.desk;
    const known = decisions[req.key];
    if (known) return known;
    this.desk.awaiting = req;
    ctx.board.park({ type: 'approval', callId: req.callId, toolName: req.toolName, args: req.args, argsHash: req.argsHash });
    ctx.trace.emit('approval_required', { toolName: req.toolName, args: req.args, callId: req.callId, argsHash: req.argsHash, ...(req.hashRequired ? { argsHashRequired: true } : {}) });
    ctx.metrics.approvalsRequested.add(1, { tool: req.toolName });
    const parkedAt = Date.now();
    await this.decisionOrTimeout(req.key);
    this.desk.awaiting = null;
    const decision = decisions[req.key] ?? this.rejectForInterrupt(req);
    if (decision) {
      ctx.metrics.approvalsDecided.add(1, { tool: req.toolName, decision: decision.decision });
      ctx.metrics.approvalWaitMs.record(Math.max(0, Date.now() - parkedAt), { tool: req.toolName });
      ctx.board.unpark();
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
    this.desk.decisions[req.key] = decision;
    this.ctx.trace.emit('approval_decided', { toolName: req.toolName, ...decision });
    return decision;
  }

  /**
   * Waits until the call has a decision or the approval timeout passes. The
   * condition itself only looks; decisions are applied by draining the inbox
   * here. The timer is started once for the whole wait, as
   * wf.condition(fn, timeout) would: the same commands either way.
   */
  private async decisionOrTimeout(key: string): Promise<void> {
    // A steer with `interrupt` ends the wait too (an explicit decision that came with it is taken first).
    const decided = () => this.desk.decisions[key] !== undefined || this.steering.queue.anyInterrupt() !== null;
    const untilDecided = async () => {
      for (;;) {
        this.inbox.drain();
        if (decided()) return;
        // decided(): histories recorded before the inbox took decisions in their handler.
        await wf.condition(() => this.inbox.hasPending() || decided());
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
