// With a context policy, the next prompt stays inside the model's window:
// old tool results are elided, or old turns folded into a summary the model
// writes (common/context-window.ts plans both). A summary is paid from the
// budget like a turn, so the run may stop here.
import { applySummary, elideForWindow, planSummary } from '../common/context-window.js';
import { isBudgetSpent, type Budget } from './budget.js';
import { askForSummary, countModelCall, modelCallBase } from './model-turn.js';
import type { Exit } from './exits.js';
import type { RunContext } from './run-context.js';
import { recordSummarySpend } from './run-state.js';

export async function fitContextWindow(ctx: RunContext, budget: Budget): Promise<Exit | null> {
  const { state, cfg } = ctx;
  const last = state.promptTokensPerTurn.at(-1);
  const policy = cfg.context;
  const since = state.messagesAtLastCall ?? 0;
  let exit: Exit | null = null;
  if (policy?.strategy === 'summarize' && last !== undefined) {
    const plan = planSummary(state.messages, last, since, policy);
    if (plan) {
      const reply = await askForSummary(ctx.modelCalls, plan.request, modelCallBase(ctx), plan.turns);
      const cost = recordSummarySpend(state, reply.usage, cfg.pricing);
      applySummary(state.messages, plan, reply.message.content ?? '');
      countModelCall(ctx, reply.usage, cost);
      ctx.trace.emit('context_summarized', {
        turns: plan.turns,
        estimatedTokensBefore: plan.estimatedBefore,
        estimatedTokensAfter: plan.estimatedAfter,
        windowTokens: policy.windowTokens,
        prompt_tokens: reply.usage.promptTokens,
        completion_tokens: reply.usage.completionTokens,
        summaryCostUsd: cost,
        costUsd: state.costUsd,
      });
      if (isBudgetSpent(state, cfg)) exit = budget.stopForBudget();
    }
  } else if (policy && last !== undefined) {
    const cut = elideForWindow(state.messages, last, since, policy);
    if (cut) {
      ctx.trace.emit('context_elided', { elided: cut.elided, droppedTurns: cut.droppedTurns, estimatedTokensBefore: cut.estimatedBefore, estimatedTokensAfter: cut.estimatedAfter, windowTokens: policy.windowTokens });
    }
  }
  state.messagesAtLastCall = state.messages.length;
  return exit;
}
