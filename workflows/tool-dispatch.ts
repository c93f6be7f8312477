// One pending tool call, from the model's reply to its result in the
// transcript: refused when it names no enabled tool or bad arguments,
// declined by a steer's interrupt, held for approval, served from the dedupe
// cache, run as a child (sub-agents) or as an activity, and, when a write's
// outcome is unknown and the run asked for it, held for a person to reconcile.
import * as wf from '@temporalio/workflow';
import type { ToolOutcome } from '../common/contract.js';
import { needsApproval, type ToolSpec } from '../common/tool-spec.js';
import { capToolResult, callSummary } from '../common/transcript-text.js';
import type { Approvals } from './approvals.js';
import { recordCached, recordResult, recordStopped, remember, toolFailed } from './call-results.js';
import type { Exit } from './exits.js';
import { reconciledText, type Reconciler } from './reconcile.js';
import type { RunContext } from './run-context.js';
import { forgetResults } from './run-state.js';
import { runContextKey } from '../common/run-context.js';
import type { Budget } from './budget.js';
import type { Steering } from './steering.js';
import { runSubAgentCall } from './sub-agents.js';
import { cacheKey, idempotencyKey, isCacheable, parseCall, type PendingCall } from './tool-calls.js';


export class ToolDispatch {
  constructor(
    private readonly ctx: RunContext,
    private readonly approvals: Approvals,
    private readonly steering: Steering,
    private readonly reconciler: Reconciler,
    private readonly budget: Budget,
  ) {}

  /** Runs, declines, or serves from cache one pending call. Returns an exit when the run must stop. */
  async handle(pending: PendingCall): Promise<Exit | null> {
    const { ctx } = this;
    const { call } = pending;
    const parsed = parseCall(call, ctx.specs);
    if (!parsed.ok) {
      // Refused before it could run (unknown tool, bad arguments): on record like any other call's end.
      ctx.trace.emit('tool_result', { toolName: parsed.toolName.slice(0, 100), callId: call.id, ms: 0, ok: false, refused: parsed.error });
      return toolFailed(ctx, pending, parsed.toolName, parsed.error, false);
    }
    const { toolName, args, spec } = parsed;
    const key = idempotencyKey(ctx.ids.workflowId, ctx.ids.effectsChainId, pending, ctx.state);
    // A steer with `interrupt`: no call of this reply starts after it.
    if (this.steering.declineIfInterrupted(pending, toolName)) return null;

    if (needsApproval(spec.needsApproval, args)) {
      const approval = await this.approvals.check(pending, toolName, args, key);
      if (approval !== 'go') return approval;
    }

    const cacheable = isCacheable(spec, ctx.cfg.dedupe);
    const ck = cacheKey(toolName, args);
    const cached = cacheable ? ctx.state.cache[ck] : undefined;
    if (cached !== undefined) {
      recordCached(ctx, call, toolName, cached);
      return null;
    }

    // A Stop taken while this call waited (for its decision, say): it never starts.
    if (ctx.stop.stopped) return ctx.stop.exit();
    // A write (or a child that may write) starts: reads cached before it are stale
    // from here on, whatever its outcome. The naive cache (`all`) stays naive.
    if (!spec.readOnly && ctx.cfg.dedupe === 'readOnly') forgetResults(ctx.state);
    if (spec.subAgent) return runSubAgentCall(ctx, this.budget, pending);

    ctx.trace.emit('tool_start', { toolName, args, callId: call.id });
    const started = Date.now();
    // Where the loop would run it as a local activity, the model call may have read it ahead (./read-ahead.ts).
    const ahead = spec.activity?.local === true ? ctx.readAhead.take(ctx, pending) : undefined;
    let outcome = ahead?.outcome ?? (await this.runActivity(pending, spec, toolName, args, key, started, false));
    ctx.state.toolRuns += 1;
    ctx.trace.emit('tool_result', { toolName, callId: call.id, ms: ahead?.ms ?? Date.now() - started, ok: outcome.ok, ...(ahead ? { readAhead: true } : {}) });
    // Only runs that asked for it park: every other run tells the model what the tool said.
    while (outcome.ok && outcome.outcomeUnknown === true && ctx.cfg.unknownOutcomes === 'ask') {
      const answer = await this.reconciler.awaitAnswer({ callId: call.id, callKey: key, toolName, args, known: outcome.content });
      if (answer === null) break;
      if (answer.outcome === 'happened') {
        outcome = { ok: true, content: capToolResult(reconciledText(toolName, answer), ctx.cfg.maxToolResultChars) };
        break;
      }
      if (ctx.stop.stopped) break;
      // Tried again on a person's word: the effect protocol takes the stale claim over and acts.
      const again = Date.now();
      ctx.trace.emit('tool_start', { toolName, args, callId: call.id, retryUnknown: true, by: answer.by });
      outcome = await this.runActivity(pending, spec, toolName, args, key, again, true);
      ctx.trace.emit('tool_result', { toolName, callId: call.id, ms: Date.now() - again, ok: outcome.ok });
    }
    if (!outcome.ok) return toolFailed(ctx, pending, toolName, outcome.error, outcome.permanent);
    // The tool activity already cut its result to maxToolResultChars.
    recordResult(ctx, call, outcome.content, outcome.ref);
    if (cacheable) remember(ctx, ck, outcome.content);
    return null;
  }

  /** One attempt chain of the call's activity; a Stop while it runs is recorded in the transcript. */
  private async runActivity(pending: PendingCall, spec: ToolSpec, toolName: string, args: Record<string, unknown>, key: string, started: number, retryUnknown: boolean): Promise<ToolOutcome> {
    const { ctx } = this;
    const asLocal = spec.activity?.local === true;
    const activities = { retried: ctx.activities.tool(spec, asLocal), oneTry: ctx.activities.toolTry(spec, asLocal) };
    const summary = callSummary(toolName, args, this.approvals.decisionOf(key));
    // The seq when the call began: every try's tool_exec lines belong to it, not to a tool_waiting line.
    const traceSeq = ctx.trace.seq;
    try {
      // Through the outage wait: a call whose retries ran out on what the tool threw waits, visibly, and tries again.
      const { heldLines, ...outcome } = await ctx.toolCalls.call({ toolName, callId: pending.call.id }, activities, (activity) =>
        activity.runTool.executeWithOptions({ summary }, [{
          workflowId: ctx.ids.workflowId,
          chainId: ctx.ids.chainId,
          callId: pending.call.id,
          idempotencyKey: key,
          toolName,
          args,
          workspace: ctx.cfg.workspace,
          traceSeq,
          maxResultChars: ctx.cfg.maxToolResultChars,
          ...(retryUnknown ? { retryUnknown: true } : {}),
          ...(ctx.cfg.runContext !== undefined ? { runContextKey: runContextKey(ctx.cfg.runContext) } : {}),
          // Whether its progress is worth a signal a batch (a reader is attached), read as the call is sent.
          watched: ctx.stream.watched(),
        }]),
      );
      // Nobody watched: its lines come with it, published here before its result's event.
      if (heldLines) ctx.stream.publishHeldLines(heldLines);
      return outcome;
    } catch (err) {
      if (wf.isCancellation(err)) recordStopped(ctx, pending, toolName, started);
      throw err;
    }
  }
}
