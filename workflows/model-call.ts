// One model turn's activity call, with the prompt sent by address where the
// message store already holds it (./message-refs). Usually a turn's prompt is
// the last prompt plus a few messages: the input then holds the last prompt as
// one address (the store keeps each prompt's list of message addresses) and
// the new messages, themselves by address when a tool activity filed them. A
// turn's history bytes no longer depend on how long the run or its transcript
// is. When old messages changed (the context window elided them) the prompt
// travels as one address per message for that turn.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { BudgetedReply, CallModelInput } from '../common/activity-contract.js';
import type { ReplyBudget } from '../common/budget-math.js';
import type { RunState } from './run-state.js';
import type { RunContext } from './run-context.js';
import { MESSAGE_STORE_MISS, promptByAddress, rememberPrompt, wholePrompt, type PromptByAddress } from '../common/message-refs.js';
import type { OpenAiToolDefinition } from '../common/tool-spec.js';
import type { ModelCalls } from './outage-wait.js';
import type { ChatMessage, ModelReply } from '../common/contract.js';

export type ModelCallBase = Omit<CallModelInput, 'messages' | 'tools' | 'toolsRef' | 'prefix'>;

/** What every model call of the run sends beside its messages: who asks (for the trace and the Stop registry), which model. */
export function modelCallBase(ctx: Pick<RunContext, 'ids' | 'trace' | 'cfg'>): ModelCallBase {
  return { workflowId: ctx.ids.workflowId, chainId: ctx.ids.chainId, traceSeq: ctx.trace.seq, model: ctx.cfg.model, ...(ctx.cfg.debug ? { debug: true } : {}) };
}

const isStoreMiss = (err: unknown): boolean =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === MESSAGE_STORE_MISS;

/**
 * Sends the prompt by address; when this worker's store lacks some of it
 * (wiped, or a host without the shared folder), sends it whole: the state has
 * every message. Answers with the prompt that was taken, which is what the
 * store now holds.
 */
async function byAddressOrWhole<R>(state: RunState, sent: ChatMessage[], tools: OpenAiToolDefinition[], chained: boolean, call: (prompt: PromptByAddress) => Promise<R>): Promise<{ answer: R; prompt: PromptByAddress }> {
  const prompt = promptByAddress(sent, tools, state, chained);
  try {
    return { answer: await call(prompt), prompt };
  } catch (err) {
    if (!isStoreMiss(err)) throw err;
    const whole = wholePrompt(sent, tools, chained);
    return { answer: await call(whole), prompt: whole };
  }
}

/**
 * Calls the model on the state's transcript. `byAddress` false sends it all
 * inline, as histories recorded before addresses did. After a reply, the
 * state remembers what the store now holds.
 */
export async function askModel(
  model: ModelCalls,
  state: RunState,
  tools: OpenAiToolDefinition[],
  base: ModelCallBase,
  byAddress: boolean,
  summary: string,
  chained: boolean,
): Promise<ModelReply> {
  const sent = state.messages.slice();
  if (!byAddress) return model.call((m) => m.callModel.executeWithOptions({ summary }, [{ ...base, messages: sent, tools }]));
  const { answer: reply, prompt } = await byAddressOrWhole(state, sent, tools, chained, (p) => model.call((m) => m.callModelByAddress.executeWithOptions({ summary }, [{ ...base, ...p }])));
  rememberPrompt(state, sent, tools, reply.message, prompt);
  return reply;
}

/** Asks the model for a summary of old turns: the request whole, no tools. */
export function askForSummary(model: ModelCalls, request: ChatMessage[], base: ModelCallBase, turns: number): Promise<ModelReply> {
  return model.call((m) => m.callModelByAddress.executeWithOptions({ summary: `summarize the ${turns} earliest turns` }, [{ ...base, messages: request, tools: [] }]));
}

/**
 * A hard budget's model call (workflows/budget.ts): the activity counts the
 * prompt it sends and sends the max_tokens `budget` pays for, or does not
 * call. Always by address, with the same fall back to whole messages.
 */
export async function askModelBudgeted(
  model: ModelCalls,
  state: RunState,
  tools: OpenAiToolDefinition[],
  base: ModelCallBase,
  summary: string,
  budget: ReplyBudget,
  chained: boolean,
): Promise<BudgetedReply> {
  const sent = state.messages.slice();
  const { answer, prompt } = await byAddressOrWhole(state, sent, tools, chained, (p) => model.call((m) => m.callModelBudgeted.executeWithOptions({ summary }, [{ ...base, ...p, budget }])));
  if (answer.called) rememberPrompt(state, sent, tools, answer.reply.message, prompt);
  return answer;
}
