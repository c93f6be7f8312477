// A sub-agent call (a tool whose spec names a sub-agent, like `research`): a
// child run of agentRun, paid from this run's budget. Under a soft budget the
// child may spend at most what is left, and the budget is checked again the
// moment it returns, so the whole tree passes its budget by at most one turn.
// Under a hard budget, ./sub-agent-batch.ts holds each child's share first.
import type { SubAgentSpec, ToolSpec } from '../common/tool-spec.js';
import { notRunText, toolResultMessage } from '../common/transcript-text.js';
import { recordStopped, remember, toolFailed } from './call-results.js';
import { budgetLeft, childBudget, isBudgetSpent, type Exit } from './next-step.js';
import type { RunContext } from './run-context.js';
import { recordChildSpend } from './run-state.js';
import type { Spend } from './spend.js';
import { runSubAgent } from './sub-agent.js';
import { subAgentBatch } from './sub-agent-batch.js';
import { subAgentChildId, type PendingCall } from './tool-calls.js';

/** Runs the call's child (with a hard budget: it and the sub-agent calls after it in the reply); an exit when the run must stop. */
export async function runSubAgentCall(ctx: RunContext, spend: Spend, pending: PendingCall, spec: ToolSpec, sub: SubAgentSpec, args: Record<string, unknown>, ck: string | null): Promise<Exit | null> {
  if (spend.hard) return subAgentBatch(ctx, spend.hard, pending);
  const { call } = pending;
  const toolName = spec.name;
  const left = budgetLeft(ctx.state, ctx.cfg);
  if (left !== null && left <= 0) {
    ctx.state.messages.push(toolResultMessage(call, notRunText(toolName, 'the run\'s budget is spent')));
    ctx.trace.emit('tool_result', { toolName, callId: call.id, ms: 0, ok: false, notRun: 'budget spent' });
    return spend.stopForBudget();
  }
  const task = String(args[sub.taskArgument]);
  ctx.trace.emit('tool_start', { toolName, args, callId: call.id, budgetUsd: childBudget(left) });
  const started = Date.now();
  const child = await runSubAgent(ctx.cfg, sub, toolName, subAgentChildId(ctx.ids.workflowId, pending, toolName), task, childBudget(left));
  // The parent pays for its children: their spend counts against its budget.
  recordChildSpend(ctx.state, child.costUsd, child.usage);
  if (ctx.stop.stopped) {
    // The child was stopped with its parent: that is a Stop, not a tool failure.
    recordStopped(ctx, pending, toolName, started);
    return ctx.stop.exit();
  }
  ctx.state.toolRuns += 1;
  ctx.trace.emit('tool_result', { toolName, callId: call.id, ms: Date.now() - started, ok: child.outcome.ok, childCostUsd: child.costUsd });
  const failed = child.outcome.ok ? null : toolFailed(ctx, pending, toolName, child.outcome.error, child.outcome.permanent);
  if (child.outcome.ok) {
    ctx.state.messages.push(toolResultMessage(call, child.outcome.content));
    if (ck !== null) remember(ctx, ck, child.outcome.content);
  }
  if (failed) return failed;
  return isBudgetSpent(ctx.state, ctx.cfg) ? spend.stopForBudget() : null;
}
