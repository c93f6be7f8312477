// The run's money: each model call is paid from its budget and counted in its
// totals, metrics and trace. A soft budget (the default) is checked between
// turns and may be passed by one turn; a hard one (./budget.ts) holds each
// call's worst case before it is made and parks the run when it cannot pay.
import * as wf from '@temporalio/workflow';
import type { ModelReply, OverReservationFlag, RunStatusView, Usage } from '../common/contract.js';
import { raiseBudgetUpdate } from '../common/run-messages.js';
import { notRunText, toolResultMessage } from '../common/transcript-text.js';
import { turnCostUsd } from '../common/turn-cost.js';
import { HardBudget, overReservationExit } from './budget.js';
import { STOPPING } from './stop.js';
import { askModel, askModelBudgeted, modelCallBase } from './model-call.js';
import { budgetExit, type Exit } from './exits.js';
import { limitExit, takeReply } from './next-step.js';
import type { RunContext } from './run-context.js';
import { firstPendingCall } from './tool-calls.js';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';
import { otherSignatureProblem } from './signatures.js';
import { updateRefused } from './update-refusal.js';

/** A model call's answer: the reply, and under a hard budget what it held and was charged. */
type Asked = { exit: Exit } | { reply: ModelReply; chargedUsd?: number; over?: OverReservationFlag | null; hold?: { maxTokens: number; reservedUsd: number } };

export class Spend {
  /** A hard budget (limits.budgetMode "hard"); null for a soft one, as every run before it. */
  readonly hard: HardBudget | null;

  constructor(private readonly ctx: RunContext) {
    this.hard = ctx.cfg.hardBudget
      ? new HardBudget(
          {
            cfg: ctx.cfg,
            state: ctx.state,
            emit: (type, fields) => ctx.trace.emit(type, fields),
            showParked: (shortfall) => (shortfall ? ctx.board.park(shortfall) : ctx.board.unpark()),
          },
          ctx.cfg.hardBudget,
          wf.workflowInfo().parent?.workflowId ?? null,
        )
      : null;
  }

  /** Registered for every run, so a soft run's refusal says why; only a hard budget ever applies a raise. */
  register(): void {
    const { ctx } = this;
    wf.setHandler(
      raiseBudgetUpdate,
      (input) => {
        this.hard?.raise(input);
        return ctx.board.view();
      },
      {
        validator: (input) => {
          const problem = ctx.board.exit
            ? 'the run has ended'
            : ctx.stop.stopped
              ? STOPPING
              : this.hard
                ? (this.hard.raiseProblem(input) ?? otherSignatureProblem(ctx.cfg, 'raiseBudget', input))
                : 'this run has a soft budget (limits.budgetMode "soft"): nothing waits for a raise; resume it with a higher budget instead';
          if (problem) throw updateRefused(problem);
        },
      },
    );
  }

  /**
   * One turn: the model call (under a hard budget, only within what the budget
   * holds for it, the run parked first if need be), its reply taken into the
   * transcript and paid for, and the `turn` trace line. Returns the exit the
   * reply leads to, if any, or null to go on.
   */
  async takeTurn(toolDefs: OpenAiToolDefinition[]): Promise<{ exit: Exit | null }> {
    const { ctx } = this;
    const asked = await this.ask(toolDefs);
    if ('exit' in asked) return asked;
    const { reply } = asked;
    const exit = takeReply(ctx.state, reply, ctx.cfg.pricing, asked.chargedUsd);
    ctx.metrics.turns.add(1);
    this.count(reply.usage, asked.chargedUsd ?? turnCostUsd(reply.usage, ctx.cfg.pricing));
    ctx.trace.emit('turn', {
      turn: ctx.state.turns,
      prompt_tokens: reply.usage.promptTokens,
      completion_tokens: reply.usage.completionTokens,
      total_tokens: reply.usage.promptTokens + reply.usage.completionTokens,
      turnCostUsd: turnCostUsd(reply.usage, ctx.cfg.pricing),
      costUsd: ctx.state.costUsd,
      finish: reply.finishReason,
      ...(reply.model ? { model: reply.model } : {}),
      ...(reply.usageEstimated ? { usageEstimated: true } : {}),
      ...(asked.hold ? { maxTokens: asked.hold.maxTokens, heldUsd: asked.hold.reservedUsd, chargedUsd: asked.chargedUsd } : {}),
    });
    if (asked.over) return { exit: this.stopForBudget('the provider reported more usage than the call allowed', overReservationExit(asked.over)) };
    return { exit };
  }

  /** Every model call's tokens and cost in the metrics: turns and summaries alike. */
  count(usage: Usage, costUsd: number): void {
    this.ctx.metrics.promptTokens.add(usage.promptTokens);
    this.ctx.metrics.completionTokens.add(usage.completionTokens);
    this.ctx.metrics.costMicroUsd.add(Math.round(costUsd * 1e6));
  }

  /**
   * Stops for the budget while calls of the last reply may still be pending:
   * each gets a result saying it was not run, so the transcript keeps the
   * protocol's two rules. `stop`: the exit to end with instead of the budget's.
   */
  stopForBudget(why = 'the run\'s budget is spent', stop?: Exit): Exit {
    const { ctx } = this;
    for (let p = firstPendingCall(ctx.state.messages); p; p = firstPendingCall(ctx.state.messages)) {
      ctx.state.messages.push(toolResultMessage(p.call, notRunText(p.call.function.name, why)));
      ctx.trace.emit('tool_result', { toolName: p.call.function.name, callId: p.call.id, ms: 0, ok: false, notRun: stop ? why : 'budget spent' });
    }
    if (stop) return stop;
    const exit = limitExit(ctx.state, ctx.cfg);
    if (exit) return exit;
    return budgetExit('budget spent');
  }

  /** Hard budget only: the budget and the flag of a reply beyond its hold, in the status and the result. */
  fields(): Pick<RunStatusView, 'budget' | 'usageOverReservation'> {
    if (!this.hard) return {};
    return { budget: this.hard.view(), usageOverReservation: this.ctx.state.usageOverReservation ?? null };
  }

  private async ask(toolDefs: OpenAiToolDefinition[]): Promise<Asked> {
    const { ctx } = this;
    // The turn names the call's tokens in the live stream; a field of the input, no command added.
    const base = { ...modelCallBase(ctx), turn: ctx.state.turns + 1 };
    // The Web UI names each activity: "model turn 3", "read_file errors.log".
    const summary = `model turn ${ctx.state.turns + 1}`;
    // Runs that recorded all-patches-v2 chain their prompt lists (common/message-refs.ts chainNode).
    const chained = ctx.patches.allV2;
    if (!this.hard) return { reply: await askModel(ctx.modelCalls, ctx.state, toolDefs, base, ctx.patches.messageRefs, summary, chained) };
    const r = await this.hard.modelCall((budget) => askModelBudgeted(ctx.modelCalls, ctx.state, toolDefs, { ...base, traceSeq: ctx.trace.seq }, summary, budget, chained));
    if ('exit' in r) return r;
    const { chargedUsd, over } = this.hard.settle(r.reply, r.hold);
    return { reply: r.reply, chargedUsd, over, hold: r.hold };
  }
}
