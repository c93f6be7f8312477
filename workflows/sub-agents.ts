// A sub-agent call (a tool whose spec names a sub-agent, like `research`): a
// whole child run of agentRun with its own transcript, system prompt, model,
// tools and limits (the spec's; SUB_AGENT_LIMITS where it sets none, the
// parent's model where it names none), cancelled with its parent, paid from
// this run's budget.
//
// Whatever the budget mode, the sub-agent calls of one reply that need no
// decision run side by side (batchFrom), and each child's budget is reserved
// through the run's BudgetStrategy before any child starts: its own cap, at
// most an even share of what is left, so the children of one reply never add
// up to more than the parent has. Under a hard budget the reservation is a
// hold on the parent's budget that comes back, less what the child spent,
// when it ends — completed, failed, stopped, or at the end of a chain of
// continue-as-new executions (the child's result carries the chain's total).
// Under a soft budget nothing is held, and the budget is checked again the
// moment the children return, so the whole tree passes its budget by at most
// one turn of each run. A child whose result never comes (it failed outright,
// or was terminated by hand) is charged its whole budget: what it spent is
// unknown, and the charge must stay an upper bound.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import { SUB_AGENT_LIMITS } from '../common/defaults.js';
import { needsApproval, type SubAgentSpec } from '../common/tool-spec.js';
import { capToolResult } from '../common/transcript-text.js';
import type { AgentInput, RunConfig, RunResult, ToolOutcome, Usage } from '../common/contract.js';
import { isBudgetSpent, type Budget } from './budget.js';
import { recordNotRun, recordResult, recordStopped, remember, toolFailed } from './call-results.js';
import type { Exit } from './exits.js';
import type { RunContext } from './run-context.js';
import { recordChildSpend } from './run-state.js';
import { undecodableProblem } from '../common/undecodable.js';
import { cacheKey, isCacheable, parseCall, subAgentChildId, type PendingCall } from './tool-calls.js';

interface SubAgentOutcome {
  outcome: ToolOutcome;
  costUsd: number;
  usage: Usage;
}

/** One sub-agent call of a reply: what its child is asked, and where its result goes. */
interface Job {
  pending: PendingCall;
  toolName: string;
  sub: SubAgentSpec;
  task: string;
  args: Record<string, unknown>;
  cacheKey: string | null;
}

/** A sub-agent's limits, its spec's over the defaults. */
export function subAgentLimits(sub: SubAgentSpec): { maxTurns: number; maxUsd: number } {
  return { maxTurns: sub.limits?.maxTurns ?? SUB_AGENT_LIMITS.maxTurns, maxUsd: sub.limits?.maxUsd ?? SUB_AGENT_LIMITS.maxUsd };
}

/** Runs `first` (a sub-agent call) and the sub-agent calls after it in the same reply that can start now, side by side; an exit when the run must stop. */
export async function runSubAgentCall(ctx: RunContext, budget: Budget, first: PendingCall): Promise<Exit | null> {
  // A soft budget the turn that asked already spent: no child starts (a hard budget is never spent here).
  if (isBudgetSpent(ctx.state, ctx.cfg)) return budget.stopForBudget();
  const { strategy } = budget;
  const jobs = batchFrom(ctx, first);
  // Every child's budget is reserved, in call order, before any child starts.
  const budgets = strategy.reserve(jobs.map((job) => subAgentLimits(job.sub).maxUsd));
  const started = Date.now();
  const outcomes = await Promise.allSettled(
    jobs.map((job, i) => {
      const { call } = job.pending;
      if (budgets[i] <= 0) return Promise.resolve(null);
      ctx.trace.emit('tool_start', { toolName: job.toolName, args: job.args, callId: call.id, budgetUsd: budgets[i] });
      return runSubAgent(ctx.cfg, job.sub, job.toolName, subAgentChildId(ctx.ids.workflowId, job.pending, job.toolName), job.task, budgets[i]);
    }),
  );
  let failure: unknown = null;
  let exit: Exit | null = null;
  outcomes.forEach((o, i) => {
    const job = jobs[i];
    strategy.release(budgets[i]);
    if (o.status === 'rejected') {
      // No result, so no spend to read: the whole budget is charged.
      recordChildSpend(ctx.state, budgets[i], { promptTokens: 0, completionTokens: 0 });
      failure ??= o.reason;
      return;
    }
    const child: SubAgentOutcome | null = o.value;
    if (child === null) {
      recordNotRun(ctx, job.pending.call, job.toolName, "the run's budget has nothing left to give a sub-agent", 'budget spent');
      return;
    }
    // Once an exit is set, a later child's failure is not written: only the
    // first exit counts. Its spend and Stop still are.
    const ended = recordChildResult(ctx, job, child, started, exit === null);
    exit ??= ended;
  });
  if (failure !== null) throw failure;
  if (exit === null && ctx.stop.stopped) exit = ctx.stop.exit();
  // A soft budget's check the moment the children return (a hard budget is never "spent" here: it parks before a call it cannot pay).
  if (exit === null && isBudgetSpent(ctx.state, ctx.cfg)) exit = budget.stopForBudget();
  return exit;
}

/**
 * The one place a child's end is recorded: its spend is
 * charged to this run (the parent pays for its children), then its result
 * enters the transcript (and the dedupe cache), or, when the run was stopped
 * meanwhile, the Stop does. `recordFailure`: whether a failed child's error
 * is written (and may end the run). Returns the exit the child's end calls for.
 */
function recordChildResult(
  ctx: RunContext,
  job: Pick<Job, 'pending' | 'toolName' | 'cacheKey'>,
  child: SubAgentOutcome,
  started: number,
  recordFailure: boolean,
): Exit | null {
  const { pending, toolName } = job;
  recordChildSpend(ctx.state, child.costUsd, child.usage);
  if (ctx.stop.stopped) {
    // The child was stopped with its parent: that is a Stop, not a tool failure.
    recordStopped(ctx, pending, toolName, started);
    return ctx.stop.exit();
  }
  ctx.state.toolRuns += 1;
  ctx.trace.emit('tool_result', { toolName, callId: pending.call.id, ms: Date.now() - started, ok: child.outcome.ok, childCostUsd: child.costUsd });
  if (child.outcome.ok) {
    recordResult(ctx, pending.call, child.outcome.content);
    if (job.cacheKey !== null) remember(ctx, job.cacheKey, child.outcome.content);
    return null;
  }
  return recordFailure ? toolFailed(ctx, pending, toolName, child.outcome.error, child.outcome.permanent) : null;
}

/**
 * `first` (a sub-agent call) and the calls right after it in its reply that
 * are sub-agent calls too, parse, need no decision and have no cached result:
 * those can start together. The batch stops at the first call that cannot.
 */
function batchFrom(ctx: RunContext, first: PendingCall): Job[] {
  const m = ctx.state.messages[first.messageIndex];
  const calls = m.role === 'assistant' ? (m.tool_calls ?? []) : [];
  const jobs: Job[] = [];
  for (const call of calls.slice(calls.indexOf(first.call))) {
    const parsed = parseCall(call, ctx.specs);
    if (!parsed.ok || !parsed.spec.subAgent) break;
    const sub = parsed.spec.subAgent;
    const key = cacheKey(parsed.toolName, parsed.args);
    const cacheable = isCacheable(parsed.spec, ctx.cfg.dedupe);
    if (jobs.length > 0 && (needsApproval(parsed.spec.needsApproval, parsed.args) || (cacheable && ctx.state.cache[key] !== undefined))) break;
    // The same question twice in one reply runs once, as the soft loop's cache would have it.
    if (jobs.some((j) => j.cacheKey !== null && j.cacheKey === key)) break;
    jobs.push({ pending: { call, messageIndex: first.messageIndex }, toolName: parsed.toolName, sub, task: String(parsed.args[sub.taskArgument]), args: parsed.args, cacheKey: cacheable ? key : null });
  }
  return jobs;
}

/** Starts the child run and waits for its result: the tool outcome the parent's model reads, and what the child spent. */
async function runSubAgent(cfg: RunConfig, sub: SubAgentSpec, toolName: string, childId: string, task: string, budgetUsd: number): Promise<SubAgentOutcome> {
  // By type name and signature: importing the workflow function here would make a module cycle.
  const child = await wf.executeChild<(input: AgentInput) => Promise<RunResult>>('agentRun', {
    workflowId: childId,
    args: [
      {
        task,
        // The sub-agent's own instructions, model and tools (common/tool-spec.ts SubAgentSpec).
        ...ownDefinition(sub, cfg),
        // Never more than the parent has left: the parent's budget pays for the whole tree.
        limits: { maxTurns: subAgentLimits(sub).maxTurns, maxBudgetUsd: budgetUsd, ...hardLimits(cfg) },
        // A hard budget's child runs under the same rules, and continues as new where its parent would.
        ...(cfg.hardBudget ? { continueAsNewAtHistoryBytes: cfg.continueAsNewAtHistoryBytes } : {}),
        toolErrors: cfg.toolErrors,
        workspace: cfg.workspace,
        maxToolResultChars: cfg.maxToolResultChars,
        // The child serves the same tenant, user and ticket: its tools are scoped as the parent's.
        ...(cfg.runContext !== undefined ? { runContext: cfg.runContext } : {}),
      },
    ],
    // One Stop cancels the whole tree.
    parentClosePolicy: 'REQUEST_CANCEL',
  });
  // A result the worker could not decode (common/undecodable.ts) is a child that failed, not a result to read.
  const undecodable = undecodableProblem(child, `${toolName} sub-agent's result`);
  if (undecodable) throw ApplicationFailure.create({ type: 'UndecodablePayload', message: undecodable, nonRetryable: true });
  const outcome: ToolOutcome =
    child.status === 'completed'
      ? { ok: true, content: capToolResult(child.output ?? '', cfg.maxToolResultChars) }
      : { ok: false, error: `the ${toolName} sub-agent stopped with ${child.status}: ${child.error ?? 'no answer'}`, permanent: false };
  return { outcome, costUsd: child.costUsd, usage: child.usage };
}

/**
 * What the child's spec makes its own: its system prompt, model and tools.
 * Prices go with the model: a child on its parent's model keeps its parent's
 * prices (the input's, if the parent was given some); a child on another
 * model is given none, so its worker prices that model, and what the parent is
 * charged (the child's costUsd) is the child's model's price.
 */
function ownDefinition(sub: SubAgentSpec, cfg: RunConfig): Pick<AgentInput, 'model' | 'system' | 'tools' | 'pricing'> {
  const model = sub.model ?? cfg.model;
  return {
    model,
    ...(sub.system !== undefined ? { system: sub.system } : {}),
    tools: sub.tools,
    ...(model === cfg.model ? { pricing: cfg.pricing } : {}),
  };
}

/** A hard budget's settings for its child (soft parents give none: their children's input is what it always was). */
function hardLimits(cfg: RunConfig): Pick<NonNullable<AgentInput['limits']>, 'budgetMode' | 'minReplyTokens' | 'maxReplyTokens'> {
  if (!cfg.hardBudget) return {};
  return { budgetMode: 'hard', minReplyTokens: cfg.hardBudget.minReplyTokens, maxReplyTokens: cfg.hardBudget.maxReplyTokens };
}
