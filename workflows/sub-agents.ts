// A sub-agent call (a tool whose spec names a sub-agent, like `research`): a
// whole child run of agentRun with its own transcript and limits, cancelled
// with its parent, paid from this run's budget. Under a soft budget the child
// may spend at most what is left, and the budget is checked again the moment
// it returns, so the whole tree passes its budget by at most one turn.
//
// Under a hard budget the sub-agent calls of one reply that need no decision
// run side by side; each child's budget is held from the parent's before that
// child starts (so however many run, the holds never add up to more than the
// parent has), and comes back, less what the child spent, when it ends —
// completed, failed, stopped, or at the end of a chain of continue-as-new
// executions (the child's result carries the chain's total). A child whose
// result never comes (it failed outright, or was terminated by hand) is
// charged its whole hold: what it spent is unknown, and the budget must stay
// an upper bound.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import { RESEARCH_LIMITS } from '../common/defaults.js';
import { needsApproval, type SubAgentSpec, type ToolSpec } from '../common/tool-spec.js';
import { capToolResult } from '../common/transcript-text.js';
import type { AgentInput, RunConfig, RunResult, ToolOutcome, Usage } from '../common/contract.js';
import { budgetLeft, childBudget, isBudgetSpent, type Budget, type HardBudget } from './budget.js';
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

/** Runs the call's child (with a hard budget: it and the sub-agent calls after it in the reply); an exit when the run must stop. */
export async function runSubAgentCall(ctx: RunContext, budget: Budget, pending: PendingCall, spec: ToolSpec, sub: SubAgentSpec, args: Record<string, unknown>, ck: string | null): Promise<Exit | null> {
  if (budget.hard) return subAgentBatch(ctx, budget.hard, pending);
  const { call } = pending;
  const toolName = spec.name;
  const left = budgetLeft(ctx.state, ctx.cfg);
  if (left !== null && left <= 0) {
    recordNotRun(ctx, call, toolName, 'the run\'s budget is spent', 'budget spent');
    return budget.stopForBudget();
  }
  const task = String(args[sub.taskArgument]);
  ctx.trace.emit('tool_start', { toolName, args, callId: call.id, budgetUsd: childBudget(left) });
  const started = Date.now();
  const child = await runSubAgent(ctx.cfg, sub, toolName, subAgentChildId(ctx.ids.workflowId, pending, toolName), task, childBudget(left));
  const exit = recordChildResult(ctx, { pending, toolName, cacheKey: ck }, child, started, {}, true);
  if (exit) return exit;
  return isBudgetSpent(ctx.state, ctx.cfg) ? budget.stopForBudget() : null;
}

/** Runs `first` and the sub-agent calls after it in the same reply that can start now, under a hard budget; an exit when the run must stop. */
async function subAgentBatch(ctx: RunContext, budget: HardBudget, first: PendingCall): Promise<Exit | null> {
  const jobs = batchFrom(ctx, first);
  // Every hold is taken, in call order, before any child starts: each its
  // cap, at most an even share of what is left, so one child does not leave
  // the others nothing.
  const holds = jobs.map((_, i) => budget.holdForChild(RESEARCH_LIMITS.maxBudgetUsd, jobs.length - i));
  const started = Date.now();
  const outcomes = await Promise.allSettled(
    jobs.map((job, i) => {
      const { call } = job.pending;
      if (holds[i] <= 0) return Promise.resolve(null);
      ctx.trace.emit('tool_start', { toolName: job.toolName, args: job.args, callId: call.id, budgetUsd: holds[i] });
      return runSubAgent(ctx.cfg, job.sub, job.toolName, subAgentChildId(ctx.ids.workflowId, job.pending, job.toolName), job.task, holds[i]);
    }),
  );
  let failure: unknown = null;
  let exit: Exit | null = null;
  outcomes.forEach((o, i) => {
    const job = jobs[i];
    budget.releaseChild(holds[i]);
    if (o.status === 'rejected') {
      // No result, so no spend to read: the whole hold is charged.
      recordChildSpend(ctx.state, holds[i], { promptTokens: 0, completionTokens: 0 });
      failure ??= o.reason;
      return;
    }
    const child: SubAgentOutcome | null = o.value;
    if (child === null) {
      recordNotRun(ctx, job.pending.call, job.toolName, "the run's budget has nothing left to give a sub-agent", 'budget spent');
      return;
    }
    // Once an exit is set, a later child's failure is not written (as recorded
    // runs did): only the first exit counts. Its spend and Stop still are.
    const ended = recordChildResult(ctx, job, child, started, { heldUsd: holds[i] }, exit === null);
    exit ??= ended;
  });
  if (failure !== null) throw failure;
  if (exit === null && ctx.stop.stopped) exit = ctx.stop.exit();
  return exit;
}

/**
 * The one place a child's end is recorded, for both budgets: its spend is
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
  traced: Record<string, unknown>,
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
  ctx.trace.emit('tool_result', { toolName, callId: pending.call.id, ms: Date.now() - started, ok: child.outcome.ok, childCostUsd: child.costUsd, ...traced });
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
        model: cfg.model,
        tools: sub.tools,
        // Never more than the parent has left: the parent's budget pays for the whole tree.
        limits: { maxTurns: sub.maxTurns, maxBudgetUsd: budgetUsd, ...hardLimits(cfg) },
        // A hard budget's child runs under the same rules, and continues as new where its parent would.
        ...(cfg.hardBudget ? { continueAsNewAtHistoryBytes: cfg.continueAsNewAtHistoryBytes } : {}),
        toolErrors: cfg.toolErrors,
        workspace: cfg.workspace,
        pricing: cfg.pricing,
        maxToolResultChars: cfg.maxToolResultChars,
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

/** A hard budget's settings for its child (soft parents give none: their children's input is what it always was). */
function hardLimits(cfg: RunConfig): Pick<NonNullable<AgentInput['limits']>, 'budgetMode' | 'minReplyTokens' | 'maxReplyTokens'> {
  if (!cfg.hardBudget) return {};
  return { budgetMode: 'hard', minReplyTokens: cfg.hardBudget.minReplyTokens, maxReplyTokens: cfg.hardBudget.maxReplyTokens };
}
