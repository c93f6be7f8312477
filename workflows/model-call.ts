// One model turn's activity call, with the prompt sent by address where the
// message store already holds it (./message-refs). Usually a turn's prompt is
// the last prompt plus a few messages: the input then holds the last prompt as
// one address (the store keeps each prompt's list of message addresses) and
// the new messages, themselves by address when a tool activity filed them. A
// turn's history bytes no longer depend on how long the run or its transcript
// is. When old messages changed (the context window elided them) the prompt
// travels as one address per message for that turn.
import * as wf from '@temporalio/workflow';
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { AgentActivities as Activities, BudgetedCallInput, BudgetedReply, CallModelInput } from '../common/activity-contract';
import type { ReplyBudget } from '../common/budget-math';
import type { RunState } from './run-state';
import type { RunContext } from './run-context';
import { MESSAGE_STORE_MISS, promptByAddress, rememberPrompt, wholePrompt } from '../common/message-refs';
import type { OpenAiToolDefinition } from '../common/tool-spec';
import type { ChatMessage, ModelReply } from '../common/contract';

export type ModelCallBase = Omit<CallModelInput, 'messages' | 'tools' | 'toolsRef' | 'prefix'>;

/** What every model call of the run sends beside its messages: who asks (for the trace and the Stop registry), which model. */
export function modelCallBase(ctx: Pick<RunContext, 'ids' | 'trace' | 'cfg'>): ModelCallBase {
  return { workflowId: ctx.ids.workflowId, chainId: ctx.ids.chainId, traceSeq: ctx.trace.seq, model: ctx.cfg.model, ...(ctx.cfg.debug ? { debug: true } : {}) };
}

const isStoreMiss = (err: unknown): boolean =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === MESSAGE_STORE_MISS;

/**
 * Calls the model on the state's transcript. `byAddress` false sends it all
 * inline, as histories recorded before addresses did. After a reply, the
 * state remembers what the store now holds.
 */
export async function askModel(
  model: wf.ActivityInterfaceFor<Activities>,
  state: RunState,
  tools: OpenAiToolDefinition[],
  base: ModelCallBase,
  byAddress: boolean,
  summary: string,
  chained: boolean,
): Promise<ModelReply> {
  const sent = state.messages.slice();
  if (!byAddress) return model.callModel.executeWithOptions({ summary }, [{ ...base, messages: sent, tools }]);
  const call = (input: CallModelInput) => model.callModelByAddress.executeWithOptions({ summary }, [input]);
  let prompt = promptByAddress(sent, tools, state, chained);
  let reply: ModelReply;
  try {
    reply = await call({ ...base, ...prompt });
  } catch (err) {
    if (!isStoreMiss(err)) throw err;
    // This worker's store lacks some of them (wiped, or a host without the
    // shared folder): the state has every message, so send them whole.
    prompt = wholePrompt(sent, tools, chained);
    reply = await call({ ...base, ...prompt });
  }
  rememberPrompt(state, sent, tools, reply.message, prompt);
  return reply;
}

/** Asks the model for a summary of old turns: the request whole, no tools. */
export function askForSummary(model: wf.ActivityInterfaceFor<Activities>, request: ChatMessage[], base: ModelCallBase, turns: number): Promise<ModelReply> {
  return model.callModelByAddress.executeWithOptions({ summary: `summarize the ${turns} earliest turns` }, [{ ...base, messages: request, tools: [] }]);
}

/**
 * A hard budget's model call (workflows/budget.ts): the activity counts the
 * prompt it sends and sends the max_tokens `budget` pays for, or does not
 * call. Always by address, with the same fall back to whole messages.
 */
export async function askModelBudgeted(
  model: wf.ActivityInterfaceFor<Activities>,
  state: RunState,
  tools: OpenAiToolDefinition[],
  base: ModelCallBase,
  summary: string,
  budget: ReplyBudget,
  chained: boolean,
): Promise<BudgetedReply> {
  const sent = state.messages.slice();
  const call = (input: BudgetedCallInput) => model.callModelBudgeted.executeWithOptions({ summary }, [input]);
  let prompt = promptByAddress(sent, tools, state, chained);
  let answer: BudgetedReply;
  try {
    answer = await call({ ...base, ...prompt, budget });
  } catch (err) {
    if (!isStoreMiss(err)) throw err;
    prompt = wholePrompt(sent, tools, chained);
    answer = await call({ ...base, ...prompt, budget });
  }
  if (answer.called) rememberPrompt(state, sent, tools, answer.reply.message, prompt);
  return answer;
}
