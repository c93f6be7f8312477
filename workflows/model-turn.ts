// The model call of a turn: one model activity whatever the budget mode,
// asked through the run's BudgetStrategy (./budget.ts: a hard budget sends
// the activity what it holds for the call, the run parked first if need be;
// a soft one sends nothing and holds nothing), its reply taken into the
// transcript and paid for, counted in the metrics and traced as the turn; and
// before it, the prompt kept inside the model's window (fitContextWindow).
//
// One model turn's activity call, with the prompt sent by address where the
// message store already holds it (common/message-refs.ts). Usually a turn's prompt is
// the last prompt plus a few messages: the input then holds the last prompt as
// one address (the store keeps each prompt's list of message addresses) and
// the new messages, themselves by address when a tool activity filed them. A
// turn's history bytes no longer depend on how long the run or its transcript
// is. When old messages changed (the context window elided them) the prompt
// travels as one address per message for that turn.
import { ActivityFailure, ApplicationFailure, CancelledFailure } from '@temporalio/workflow';
import { isStoppedReply, type CallModelInput, type ModelAnswer, type ReadAheadOutcome, type StoppedReply } from '../common/activity-contract.js';
import type { ReplyBudget } from '../common/budget-math.js';
import { recordSummarySpend, type RunState } from './run-state.js';
import type { RunContext } from './run-context.js';
import { MESSAGE_STORE_MISS, promptByAddress, rememberPrompt, wholePrompt, type PromptByAddress } from '../common/message-refs.js';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';
import type { ModelCalls } from './outage-wait.js';
import type { ChatMessage, ModelReply } from '../common/contract.js';
import type { OverReservationFlag, Usage } from '../common/contract.js';
import { turnCostUsd } from '../common/turn-cost.js';
import { applySummary, elideForWindow, planSummary, type SummaryPlan } from '../common/context-window.js';
import { isBudgetSpent, overReservationExit, type Budget } from './budget.js';
import type { Exit } from './exits.js';
import { takeReply } from './next-step.js';
import { structuredExit } from './structured-output.js';

export type ModelCallBase = Omit<CallModelInput, 'messages' | 'tools' | 'toolsRef' | 'prefix' | 'budget'>;

/** What every model call of the run sends beside its messages: who asks (for the trace and the Stop registry), which model. */
export function modelCallBase(ctx: Pick<RunContext, 'ids' | 'trace' | 'cfg'>): ModelCallBase {
  return { workflowId: ctx.ids.workflowId, chainId: ctx.ids.chainId, traceSeq: ctx.trace.seq, model: ctx.cfg.model, ...(ctx.cfg.debug ? { debug: true } : {}) };
}

const isStoreMiss = (err: unknown): boolean =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === MESSAGE_STORE_MISS;

/**
 * Calls the model activity on the state's transcript, by address
 * (common/message-refs.ts): history stores each message once, not the whole
 * transcript every turn. When this worker's store lacks some of it (wiped,
 * or a host without the shared folder) the prompt goes whole: the state has
 * every message. With the allowance the budget gives the call (a hard
 * budget's; none under a soft one). After a reply, the state remembers what
 * the store now holds: the prompt that was taken.
 */
export function askModel(
  model: ModelCalls,
  state: RunState,
  tools: OpenAiToolDefinition[],
  base: ModelCallBase,
  summary: string,
  budget: ReplyBudget | undefined,
): Promise<ModelAnswer> {
  const sent = state.messages.slice();
  const allowance = budget ? { budget } : {};
  const send = (prompt: PromptByAddress) => model.call((m) => m.callModel.executeWithOptions({ summary }, [{ ...base, ...prompt, ...allowance }]));
  const taken = (prompt: PromptByAddress) => (answer: ModelAnswer) => {
    if (answer.called) rememberPrompt(state, sent, tools, answer.reply.message, prompt);
    return answer;
  };
  // One `.then` with both paths, not an async function: one promise a call (the loop's note on promises, ./agent-run.ts).
  const byAddress = promptByAddress(sent, tools, state);
  return send(byAddress).then(taken(byAddress), (err: unknown) => {
    if (!isStoreMiss(err)) throw err;
    const whole = wholePrompt(sent, tools);
    return send(whole).then(taken(whole));
  });
}

/** Asks the model for a summary of old turns: the request whole, no tools, no allowance (as ever: a summary is charged after, like a soft turn). */
export async function askForSummary(model: ModelCalls, request: ChatMessage[], base: ModelCallBase, turns: number): Promise<ModelReply> {
  const answer = await model.call((m) => m.callModel.executeWithOptions({ summary: `summarize the ${turns} earliest turns` }, [{ ...base, messages: request, tools: [] }]));
  if (!answer.called) throw new Error('the model activity held back a summary call sent without a budget');
  return answer.reply;
}

/** The text and counts a model attempt stopped mid-reply sent with its cancellation; null for any other error. */
function stoppedReplyOf(err: unknown): StoppedReply | null {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof CancelledFailure)) return null;
  const [details] = err.cause.details;
  return isStoppedReply(details) ? details : null;
}

/** A model call's answer: the reply, and what was held for it and charged (under a soft budget, nothing held: its reported cost). */
type Asked = { exit: Exit } | { reply: ModelReply; chargedUsd?: number; over?: OverReservationFlag | null; hold?: { maxTokens: number; reservedUsd: number }; readAhead?: ReadAheadOutcome[] };

export class ModelTurn {
  constructor(
    private readonly ctx: RunContext,
    private readonly budget: Budget,
  ) {}

  /**
   * One turn: the model call through the run's budget strategy (under a hard
   * budget, only within what it holds for the call, the run parked first if
   * need be), its reply taken into the transcript and paid for, and the `turn` trace line. Returns the exit the
   * reply leads to, if any, or null to go on.
   */
  async takeTurn(toolDefs: OpenAiToolDefinition[]): Promise<{ exit: Exit | null }> {
    const { ctx } = this;
    let asked: Asked;
    try {
      asked = await this.ask(toolDefs);
    } catch (err) {
      const stopped = ctx.stop.stopped ? stoppedReplyOf(err) : null;
      if (!stopped) throw err;
      const partial = stopped.partialReply;
      // Nobody watched while it streamed: what it had said goes on the live stream now, ended `stopped`.
      if (stopped.heldText) ctx.stream.publishHeldText(partial.turn, stopped.heldText.attempt, partial.text, 'stopped');
      // The reply a Stop cut off: its text in the result, marked as such, with what the provider may bill for it.
      return { exit: ctx.stop.exit({ ...partial, estimatedCostUsd: turnCostUsd(partial.usage, ctx.cfg.pricing) }) };
    }
    if ('exit' in asked) return asked;
    const { reply } = asked;
    let exit = takeReply(ctx.state, reply, ctx.cfg.pricing, asked.chargedUsd);
    // The reply's reads the activity ran ahead, for the calls the loop runs next (./read-ahead.ts).
    if (ctx.state.messages.at(-1) === reply.message) ctx.readAhead.keep(asked.readAhead, ctx.state.messages.length - 1);
    ctx.metrics.turns.add(1);
    countModelCall(ctx, reply.usage, asked.chargedUsd ?? turnCostUsd(reply.usage, ctx.cfg.pricing));
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
    // With an outputSchema, an answer is final only when it is JSON valid against it (./structured-output.ts); traced after its turn.
    if (exit?.status === 'completed' && ctx.cfg.outputSchema) exit = structuredExit(ctx, exit.output);
    if (asked.over) return { exit: this.budget.stopForBudget('the provider reported more usage than the call allowed', overReservationExit(asked.over)) };
    return { exit };
  }

  private ask(toolDefs: OpenAiToolDefinition[]): Promise<Asked> {
    const { ctx } = this;
    // The turn names the call's tokens in the live stream; a field of the input, no command added. `watched`:
    // whether its tokens are worth a signal a batch (a reader is attached), read as the call is sent.
    const turn = ctx.state.turns + 1;
    const base = { ...modelCallBase(ctx), turn, watched: ctx.stream.watched(), ...turnOptions(ctx.cfg), ...ctx.readAhead.input(ctx) };
    // The Web UI names each activity: "model turn 3", "read_file errors.log".
    const summary = `model turn ${ctx.state.turns + 1}`;
    const { strategy } = this.budget;
    let readAhead: ReadAheadOutcome[] | undefined;
    // The trace's seq read when the call is sent: a hard budget may park (and trace it) first.
    const asked = strategy.modelCall((allowance) =>
      askModel(ctx.modelCalls, ctx.state, toolDefs, { ...base, traceSeq: ctx.trace.seq }, summary, allowance).then((answer) => {
        // Published before the turn's trace event, where a watched run's tokens are too.
        if (answer.called && answer.heldText) ctx.stream.publishHeldText(turn, answer.heldText.attempt, answer.reply.message.content ?? '', 'counted');
        if (answer.called) readAhead = answer.readAhead;
        return answer;
      }),
    );
    return asked.then((r) => {
      if ('exit' in r) return r;
      const { chargedUsd, over } = strategy.settle(r.reply, r.hold);
      return { reply: r.reply, over, ...(chargedUsd !== null ? { chargedUsd } : {}), ...(r.hold ? { hold: r.hold } : {}), ...(readAhead ? { readAhead } : {}) };
    });
  }
}

/** What a turn's call sends beyond the prompt: the run's model settings and its output schema. A summary sends neither (no tools to choose, no answer to shape). */
function turnOptions(cfg: RunContext['cfg']): Pick<CallModelInput, 'settings' | 'responseFormat'> {
  return {
    ...(cfg.modelSettings ? { settings: cfg.modelSettings } : {}),
    ...(cfg.outputSchema ? { responseFormat: { type: 'json' as const, schema: cfg.outputSchema, name: 'output' } } : {}),
  };
}

/** Every model call's tokens and cost in the metrics: turns and summaries alike. */
export function countModelCall(ctx: Pick<RunContext, 'metrics'>, usage: Usage, costUsd: number): void {
  ctx.metrics.promptTokens.add(usage.promptTokens);
  ctx.metrics.completionTokens.add(usage.completionTokens);
  ctx.metrics.costMicroUsd.add(Math.round(costUsd * 1e6));
}

// With a context policy, the next prompt stays inside the model's window:
// old tool results are elided, or old turns folded into a summary the model
// writes (common/context-window.ts plans both). A summary is paid from the
// budget like a turn, so the run may stop there.

/**
 * Keeps the next prompt inside the model's window. Elides here, at once;
 * when old turns are to be folded into a summary, returns its plan for
 * summarizeOldTurns, the one step that waits (a model call): a turn with
 * nothing to fold makes no promise for it (the loop's note on promises, ./agent-run.ts).
 */
export function fitContextWindow(ctx: RunContext): SummaryPlan | null {
  const { state, cfg } = ctx;
  const last = state.promptTokensPerTurn.at(-1);
  const policy = cfg.context;
  const since = state.messagesAtLastCall;
  if (policy?.strategy === 'summarize' && last !== undefined) {
    const plan = planSummary(state.messages, last, since, policy);
    if (plan) return plan;
  } else if (policy && last !== undefined) {
    const cut = elideForWindow(state.messages, last, since, policy);
    if (cut) {
      ctx.trace.emit('context_elided', { elided: cut.elided, droppedTurns: cut.droppedTurns, estimatedTokensBefore: cut.estimatedBefore, estimatedTokensAfter: cut.estimatedAfter, windowTokens: policy.windowTokens });
    }
  }
  state.messagesAtLastCall = state.messages.length;
  return null;
}

/** Folds the turns fitContextWindow planned into the summary the model writes; the budget's exit when paying for it spent the budget. */
export async function summarizeOldTurns(ctx: RunContext, budget: Budget, plan: SummaryPlan): Promise<Exit | null> {
  const { state, cfg } = ctx;
  const reply = await askForSummary(ctx.modelCalls, plan.request, modelCallBase(ctx), plan.turns);
  const cost = recordSummarySpend(state, reply.usage, cfg.pricing);
  applySummary(state.messages, plan, reply.message.content ?? '');
  countModelCall(ctx, reply.usage, cost);
  ctx.trace.emit('context_summarized', {
    turns: plan.turns,
    estimatedTokensBefore: plan.estimatedBefore,
    estimatedTokensAfter: plan.estimatedAfter,
    windowTokens: cfg.context?.windowTokens,
    prompt_tokens: reply.usage.promptTokens,
    completion_tokens: reply.usage.completionTokens,
    summaryCostUsd: cost,
    costUsd: state.costUsd,
  });
  state.messagesAtLastCall = state.messages.length;
  return isBudgetSpent(state, cfg) ? budget.stopForBudget() : null;
}
