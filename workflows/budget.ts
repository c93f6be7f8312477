// Every budget rule of a run, in one file. A soft budget (the default) is
// checked between turns, after a child returns and after a summary, and may
// be passed by one turn (isBudgetSpent, the soft checks below); the
// `raiseBudget` update and the budget stop (Budget) serve both kinds.
//
// A hard budget (limits.budgetMode "hard"): nothing is spent that was not
// held first. Before a model call the run holds what it has left and the
// model activity narrows that to the call's worst case (the prompt counted
// over what it sends, plus the largest max_tokens the budget pays for); when
// not even minReplyTokens fits, the run parks (AgentStatus awaiting_budget)
// until a `raiseBudget` update, its budgetTimeoutMs, or a Stop. A sub-agent's
// budget is held from its parent's before the child starts and comes back,
// less what the child spent, when it ends. A reply that reports more than its
// hold allowed is charged only its hold, flagged, and stops the run.
//
// The mode is chosen once, at the run's start (budgetStrategy): the loop, the
// model turn and the sub-agents call one BudgetStrategy and never ask which
// mode it is. Both modes call the same model activity; a soft budget's holds
// do nothing (it sends no allowance, holds no child's budget), a hard one's
// are the promise above.
import * as wf from '@temporalio/workflow';
import { payloadProblem, raiseBudgetSchema } from '../common/signal-schemas.js';
import { recordNotRun } from './call-results.js';
import type { RunContext } from './run-context.js';
import { markSignatureUsed, otherSignatureProblem, updateRefused } from './refusals.js';
import { STOPPING } from './stop.js';
import { firstPendingCall } from './tool-calls.js';
import { addUsd, childReservation, settleReply, type ReplyBudget, type ReplyHold } from '../common/budget-math.js';
import type { ModelAnswer } from '../common/activity-contract.js';
import type { BudgetShortfall, BudgetView, HardBudgetConfig, ModelReply, OverReservationFlag, RunConfig, RunStatusView } from '../common/contract.js';
import { budgetExit, failedExit, type Exit } from './exits.js';
import type { RunState } from './run-state.js';
import type { TraceEventType } from './trace.js';
import type { RaiseBudgetInput } from '../common/run-messages.js';

// --- soft checks: pure, on the run's state

/** A soft budget's check, before each turn and after a child or a summary. A hard budget never stops here: it parks before a call it cannot pay (HardBudget). */
export const isBudgetSpent = (s: RunState, cfg: RunConfig): boolean =>
  cfg.hardBudget === undefined && cfg.maxBudgetUsd !== null && s.costUsd >= cfg.maxBudgetUsd;

/** What the budget still allows, in USD (may be negative after the last turn); null without a budget. */
export function budgetLeft(s: RunState, cfg: RunConfig): number | null {
  return cfg.maxBudgetUsd === null ? null : cfg.maxBudgetUsd - s.costUsd;
}

/**
 * A sub-agent's budget: its own cap, never more than a `shares`th of what its
 * parent has left (so the children started together never add up to more
 * than that); 0 when nothing is left. Without a budget, its cap.
 */
export function childBudget(left: number | null, capUsd: number, shares = 1): number {
  if (left === null) return capUsd;
  return Math.max(0, Math.min(capUsd, Math.floor((left / shares) * 1e12) / 1e12));
}

/** The soft budget's exit once it is spent, or null. */
export function softBudgetExit(s: RunState, cfg: RunConfig): Exit | null {
  if (!isBudgetSpent(s, cfg)) return null;
  return budgetExit(`budget of $${cfg.maxBudgetUsd} spent ($${s.costUsd.toFixed(6)}; the check runs before each turn, so spend overshoots by at most one turn)`);
}

// --- the run's budget: the raise, the stop, and a hard budget's holds

/** The run's budget as the loop and the handlers reach it: soft or hard, with the `raiseBudget` update and the budget stop. */
export class Budget {
  /** The run's budget rules, chosen once by its mode: what the model turn and the sub-agents call. */
  readonly strategy: BudgetStrategy;
  /** The same object when the budget is hard: the `raiseBudget` update and the budget view are a hard budget's alone. */
  private readonly hard: HardBudget | null;

  constructor(
    private readonly ctx: RunContext,
    /** The loop's limit check (./next-step.ts limitExit): a turn cap reached outranks the budget. Passed in, so the rules here import nothing back from the loop. */
    private readonly limitExit: () => Exit | null,
  ) {
    this.strategy = budgetStrategy(
      {
        cfg: ctx.cfg,
        state: ctx.state,
        emit: (type, fields) => ctx.trace.emit(type, fields),
        showParked: (shortfall) => (shortfall ? ctx.visibility.park(shortfall) : ctx.visibility.unpark()),
        notifyParked: (timeoutMs) => ctx.notify.parked({ event: 'budget_required', callId: null, toolName: null, argsHash: null, timeoutMs }),
      },
      wf.workflowInfo().parent?.workflowId ?? null,
    );
    this.hard = this.strategy instanceof HardBudget ? this.strategy : null;
  }

  /** The `raiseBudget` update, set for every run so a soft run's refusal says why; only a hard budget ever applies a raise. */
  raise(request: RaiseBudgetInput): RunStatusView {
    // A signed raise is taken once: the same payload again is refused by the validator.
    if (this.hard) markSignatureUsed(this.ctx, 'raiseBudget', request);
    this.hard?.raise(request);
    return this.ctx.visibility.view();
  }

  /** The `raiseBudget` update's validator. */
  validateRaise(request: RaiseBudgetInput): void {
    const { ctx } = this;
    const problem = ctx.visibility.exit
      ? 'the run has ended'
      : ctx.stop.stopped
        ? STOPPING
        : this.hard
          ? (this.hard.raiseProblem(request) ?? otherSignatureProblem(ctx, 'raiseBudget', request))
          : 'this run has a soft budget (limits.budgetMode "soft"): nothing waits for a raise; resume it with a higher budget instead';
    if (problem) throw updateRefused(problem);
  }

  /**
   * Stops for the budget while calls of the last reply may still be pending:
   * each gets a result saying it was not run, so the transcript keeps the
   * protocol's two rules. `stop`: the exit to end with instead of the budget's.
   */
  stopForBudget(why = 'the run\'s budget is spent', stop?: Exit): Exit {
    const { ctx } = this;
    for (let p = firstPendingCall(ctx.state.messages); p; p = firstPendingCall(ctx.state.messages)) {
      recordNotRun(ctx, p.call, p.call.function.name, why, stop ? why : 'budget spent');
    }
    if (stop) return stop;
    const exit = this.limitExit();
    if (exit) return exit;
    return budgetExit('budget spent');
  }

  /** Hard budget only: the budget and the flag of a reply beyond its hold, in the status and the result. */
  fields(): Pick<RunStatusView, 'budget' | 'usageOverReservation'> {
    if (!this.hard) return {};
    return { budget: this.hard.view(), usageOverReservation: this.ctx.state.usageOverReservation };
  }
}

/** What the budget needs of its run. */
export interface BudgetHost {
  readonly cfg: RunConfig;
  readonly state: RunState;
  emit(type: TraceEventType, fields: Record<string, unknown>): void;
  /** Shows the run parked on its budget (status, details, search attributes), or no longer. */
  showParked(shortfall: BudgetShortfall | null): void;
  /** Tells the webhooks the run parked on its budget (just traced); the answer ends that (workflows/notify.ts). Absent: nobody is told. */
  notifyParked?(timeoutMs: number | null): () => void;
}

/** A model call's reply with what was held for it (null: nothing was, under a soft budget). */
export type HeldReply = { reply: ModelReply; hold: ReplyHold | null };

/**
 * The budget rules of one mode, chosen once per run (budgetStrategy). Every
 * call site goes through these methods, whatever the mode: a soft budget's
 * holds and releases do nothing; a hard budget's keep its promise.
 */
export interface BudgetStrategy {
  /**
   * One model call within the budget: `ask` sends it to the model activity
   * with the allowance the activity counts against (none: nothing is held).
   * Returns the reply with its hold, or the exit that ended a wait for a raise.
   */
  modelCall(ask: (allowance: ReplyBudget | undefined) => Promise<ModelAnswer>): Promise<HeldReply | { exit: Exit }>;
  /** What the reply is charged (null: what it reported) and the flag of a reply beyond its hold. */
  settle(reply: ModelReply, hold: ReplyHold | null): { chargedUsd: number | null; over: OverReservationFlag | null };
  /**
   * Reserves the budgets of children started together, in call order, before
   * any starts: each its own cap, at most an even share of what is left after
   * the ones before it; 0 when nothing is.
   */
  reserve(capsUsd: readonly number[]): number[];
  /** A child ended: what was reserved for it comes back (what it spent is the caller's to record). */
  release(reservedUsd: number): void;
}

/** The run's strategy, by its configuration's mode: `hardBudget` set means limits.budgetMode "hard". */
export function budgetStrategy(host: BudgetHost, parentId: string | null): BudgetStrategy {
  return host.cfg.hardBudget ? new HardBudget(host, host.cfg.hardBudget, parentId) : new SoftBudget(host);
}

/**
 * A soft budget (the default): nothing is held. The model is called without
 * an allowance, a reply is charged what it reported, a child is given its cap
 * or its share of what is left with nothing held for it; the soft checks
 * (isBudgetSpent) stop the run between turns and after children.
 */
export class SoftBudget implements BudgetStrategy {
  constructor(private readonly host: Pick<BudgetHost, 'cfg' | 'state'>) {}

  modelCall(ask: (allowance: ReplyBudget | undefined) => Promise<ModelAnswer>): Promise<HeldReply> {
    return ask(undefined).then((answer) => {
      // The activity holds a call back only for want of an allowance it was not given.
      if (!answer.called) throw new Error('the model activity held back a call sent without a budget');
      return { reply: answer.reply, hold: null };
    });
  }

  settle(): { chargedUsd: null; over: null } {
    return { chargedUsd: null, over: null };
  }

  reserve(capsUsd: readonly number[]): number[] {
    const left = budgetLeft(this.host.state, this.host.cfg);
    // Nothing is held: the shares are counted here alone, so the children of one reply never add up to more than is left.
    let rest = left === null ? null : Math.max(0, left);
    return capsUsd.map((cap, i) => {
      const given = childBudget(rest, cap, capsUsd.length - i);
      if (rest !== null) rest = Math.max(0, addUsd(rest, -given));
      return given;
    });
  }

  release(): void {}
}

export class HardBudget implements BudgetStrategy {
  /** Held for what runs now: a model call's worst case, children's budgets. */
  private held = 0;
  /** A raise arrived while parked (handlers only record; the parked loop reads it). */
  private raisedSinceParked = false;
  private parked: BudgetShortfall | null = null;

  constructor(
    private readonly host: BudgetHost,
    private readonly settings: HardBudgetConfig,
    /** A child's budget is held for it by its parent: it ends rather than waits for a raise no one can give it. */
    private readonly parentId: string | null,
  ) {}

  get maxUsd(): number {
    return this.host.cfg.maxBudgetUsd ?? 0;
  }

  private committed(): number {
    return addUsd(this.host.state.costUsd, this.held);
  }

  view(): BudgetView {
    const spent = this.host.state.costUsd;
    return {
      mode: 'hard',
      maxBudgetUsd: this.maxUsd,
      spentUsd: spent,
      heldUsd: this.held,
      availableUsd: Math.max(0, addUsd(this.maxUsd, -this.committed())),
      raises: [...this.host.state.budgetRaises],
    };
  }

  /**
   * One model call within the budget: `ask` sends it with what the budget
   * allows (the activity does not call when that is too little). Parks while
   * it cannot pay; returns the reply with its hold, or the exit that ended the wait.
   */
  async modelCall(ask: (budget: ReplyBudget) => Promise<ModelAnswer>): Promise<HeldReply | { exit: Exit }> {
    for (;;) {
      const budget: ReplyBudget = {
        committedUsd: this.committed(),
        maxUsd: this.maxUsd,
        pricing: this.host.cfg.pricing,
        minReplyTokens: this.settings.minReplyTokens,
        maxReplyTokens: this.settings.maxReplyTokens,
      };
      // Everything left is held while the call runs; the activity's hold is the part it may really cost.
      const all = Math.max(0, addUsd(budget.maxUsd, -budget.committedUsd));
      this.held = addUsd(this.held, all);
      let answer: ModelAnswer;
      try {
        answer = await ask(budget);
      } finally {
        this.held = addUsd(this.held, -all);
      }
      if (answer.called) return { reply: answer.reply, hold: answer.hold };
      // A raise that landed while the activity counted: ask again with it rather than park.
      if (this.maxUsd > budget.maxUsd) continue;
      const exit = await this.park(answer.shortfall);
      if (exit) return { exit };
    }
  }

  /** Waits for a raise (null) or ends the run: its budgetTimeoutMs passed, or it is a child. A Stop throws out of the wait. */
  private async park(s: { needUsd: number; needBudgetUsd: number; shortUsd: number; promptTokens: number; minReplyTokens: number }): Promise<Exit | null> {
    const shortfall: BudgetShortfall = { type: 'budget', ...s, maxBudgetUsd: this.maxUsd, costUsd: this.host.state.costUsd };
    const needs = `the next model call needs $${s.needUsd.toFixed(6)} at worst (${s.promptTokens} prompt tokens and a ${s.minReplyTokens}-token reply); $${this.view().availableUsd.toFixed(6)} of $${this.maxUsd} is left`;
    if (this.parentId !== null) {
      this.host.emit('budget_exhausted', { ...s, maxBudgetUsd: this.maxUsd, costUsd: this.host.state.costUsd, parent: this.parentId });
      return budgetExit(`${needs}; this run's budget is held for it by its parent ${this.parentId}`);
    }
    this.parked = shortfall;
    this.raisedSinceParked = false;
    this.host.showParked(shortfall);
    // The shortfall's fields without its `type` (the trace line has its own).
    this.host.emit('budget_awaited', { ...s, maxBudgetUsd: this.maxUsd, costUsd: this.host.state.costUsd });
    const timeout = this.settings.budgetTimeoutMs;
    const endNotify = this.host.notifyParked?.(timeout);
    let raised: boolean;
    try {
      raised = timeout === null ? (await wf.condition(() => this.raisedSinceParked), true) : await wf.condition(() => this.raisedSinceParked, timeout);
    } finally {
      endNotify?.();
    }
    this.parked = null;
    if (!raised) return budgetExit(`no raise within ${timeout} ms: ${needs}`);
    this.host.showParked(null);
    return null;
  }

  /** Why a raise is refused now, or null. Checked by the update's validator: a refused raise leaves no trace in history. */
  raiseProblem(request: unknown): string | null {
    if (this.parentId !== null) return `this run's budget is held for it by its parent ${this.parentId}: raise the parent's budget instead`;
    return payloadProblem(raiseBudgetSchema(this.maxUsd), request);
  }

  /** Applies a raise the validator accepted; wakes a parked run. */
  raise(request: RaiseBudgetInput): void {
    const raise = { fromUsd: this.maxUsd, toUsd: request.maxBudgetUsd, by: request.by, reason: typeof request.reason === 'string' && request.reason.trim() ? request.reason : null };
    this.host.cfg.maxBudgetUsd = request.maxBudgetUsd;
    this.host.state.budgetRaises = [...this.host.state.budgetRaises, raise];
    this.host.emit('budget_raised', { ...raise, wasParked: this.parked !== null });
    this.raisedSinceParked = true;
  }

  /** What the last reply is charged: its reported cost, at most its hold; a reply beyond its hold is flagged. */
  settle(reply: ModelReply, hold: ReplyHold | null): { chargedUsd: number | null; over: OverReservationFlag | null } {
    // Every hard call is sent with an allowance, so it has a hold; without one there is nothing to settle against.
    if (!hold) return { chargedUsd: null, over: null };
    const settled = settleReply(reply.usage, this.host.cfg.pricing, hold, this.host.state.turns + 1);
    if (settled.over) {
      this.host.state.usageOverReservation = settled.over;
      this.host.emit('usage_over_reservation', { ...settled.over });
    }
    return settled;
  }

  /** Holds the budgets of children started together: each its cap, at most an even share of what is left (holdOne). */
  reserve(capsUsd: readonly number[]): number[] {
    return capsUsd.map((cap, i) => this.holdOne(cap, capsUsd.length - i));
  }

  /** Holds one child's budget: at most `capUsd`, at most a `shares`th of what is left; 0 when nothing is. */
  private holdOne(capUsd: number, shares: number): number {
    const share = Math.floor((this.view().availableUsd / shares) * 1e12) / 1e12;
    const r = childReservation(Math.min(capUsd, share), this.committed(), this.maxUsd);
    this.held = addUsd(this.held, r);
    return r;
  }

  /** A child ended: its hold comes back; what it spent is the caller's to record. */
  release(heldUsd: number): void {
    this.held = Math.max(0, addUsd(this.held, -heldUsd));
  }
}

/** The exit of a reply that reported more than its hold: counted, flagged, the run stopped. */
export function overReservationExit(over: OverReservationFlag): Exit {
  const msg =
    `the provider reported ${over.completionTokens} completion tokens for a call sent with max_tokens ${over.maxTokens} ` +
    `($${over.reportedUsd.toFixed(6)} against a hold of $${over.reservedUsd.toFixed(6)}): counted, the excess not charged, and the run stopped`;
  return failedExit(msg, 'UsageOverReservation');
}
