// Sub-agent calls under a hard budget. The sub-agent calls of one reply that
// need no decision run side by side; each child's budget is held from the
// parent's before that child starts (so however many run, the holds never
// add up to more than the parent has), and comes back, less what the child
// spent, when it ends — completed, failed, stopped, or at the end of a chain
// of continue-as-new executions (the child's result carries the chain's total).
// A child whose result never comes (it failed outright, or was terminated by
// hand) is charged its whole hold: what it spent is unknown, and the budget
// must stay an upper bound.
import { RESEARCH_LIMITS } from '../common/defaults.js';
import { cacheKey, isCacheable, parseCall, subAgentChildId, type PendingCall } from './tool-calls.js';
import { notRunText, toolResultMessage } from '../common/transcript-text.js';
import { recordChildSpend } from './run-state.js';
import { type Exit } from './next-step.js';
import { runSubAgent, type SubAgentOutcome } from './sub-agent.js';
import { needsApproval, type SubAgentSpec } from '../common/tool-spec.js';
import type { HardBudget } from './budget.js';
import type { RunContext } from './run-context.js';
import { recordStopped, remember, toolFailed } from './call-results.js';

interface Job {
  pending: PendingCall;
  toolName: string;
  sub: SubAgentSpec;
  task: string;
  args: Record<string, unknown>;
  cacheKey: string | null;
}

/** Runs `first` and the sub-agent calls after it in the same reply that can start now; an exit when the run must stop. */
export async function subAgentBatch(ctx: RunContext, budget: HardBudget, first: PendingCall): Promise<Exit | null> {
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
    const { call } = job.pending;
    budget.releaseChild(holds[i]);
    if (o.status === 'rejected') {
      // No result, so no spend to read: the whole hold is charged.
      recordChildSpend(ctx.state, holds[i], { promptTokens: 0, completionTokens: 0 });
      failure ??= o.reason;
      return;
    }
    const child: SubAgentOutcome | null = o.value;
    if (child === null) {
      ctx.state.messages.push(toolResultMessage(call, notRunText(job.toolName, "the run's budget has nothing left to give a sub-agent")));
      ctx.trace.emit('tool_result', { toolName: job.toolName, callId: call.id, ms: 0, ok: false, notRun: 'budget spent' });
      return;
    }
    // The parent pays for its children: their spend counts against its budget.
    recordChildSpend(ctx.state, child.costUsd, child.usage);
    if (ctx.stop.stopped) {
      // Stopped with its parent: that is a Stop, not a tool failure.
      recordStopped(ctx, job.pending, job.toolName, started);
      exit ??= ctx.stop.exit();
      return;
    }
    ctx.state.toolRuns += 1;
    ctx.trace.emit('tool_result', { toolName: job.toolName, callId: call.id, ms: Date.now() - started, ok: child.outcome.ok, childCostUsd: child.costUsd, heldUsd: holds[i] });
    if (child.outcome.ok) {
      ctx.state.messages.push(toolResultMessage(call, child.outcome.content));
      if (job.cacheKey !== null) remember(ctx, job.cacheKey, child.outcome.content);
    } else {
      exit ??= toolFailed(ctx, job.pending, job.toolName, child.outcome.error, child.outcome.permanent);
    }
  });
  if (failure !== null) throw failure;
  if (exit === null && ctx.stop.stopped) exit = ctx.stop.exit();
  return exit;
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
