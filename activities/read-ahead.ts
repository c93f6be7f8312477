// Read-ahead: the model activity runs the reply's leading read-only calls
// right after the reply arrives, so the workflow task that takes the reply
// finds their results ready and schedules the next model call in the same
// activation, instead of running each call as a local activity (a second
// activation per turn). The loop decides every call exactly as before
// (workflows/read-ahead.ts): an outcome is used only where the loop would
// have run that same call as a local activity; otherwise it is dropped,
// which costs nothing but the read. Only tools the run marked local,
// read-only and never needing approval are read ahead, and only the calls
// before the reply's first other call, so no read runs ahead of a write or a
// decision it should follow.
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { cachedDigest, parseCall } from '../common/parse-call.js';
import type { CallModelInput, ReadAheadOutcome, RunToolInput } from '../common/activity-contract.js';
import type { ModelReply, ToolOutcome } from '../common/contract.js';
import { readsAhead, type ToolSpec } from '../common/tool-spec.js';

/** One call run inside the current activity (activities/tools/run-tool.ts createToolExecution); `readAhead` ends its time. */
export type ToolExecution = (input: RunToolInput, readAhead: AbortSignal | null) => Promise<ToolOutcome>;

/** Runs a reply's read-ahead calls; never throws: a call that cannot be read ahead ends the read-ahead. `attemptStartedMs`: when the model attempt began. */
export type ReadAhead = (input: CallModelInput, reply: ModelReply, attemptStartedMs: number) => Promise<ReadAheadOutcome[]>;

/** The most a reply's reads may take together: they are fast local reads, and a slow one is left to the loop. */
export const READ_AHEAD_MAX_MS = 1_000;

/**
 * How long the reads may take in this attempt. The model call is paid for
 * already: were the attempt to time out now, Temporal would retry it and buy
 * the turn again. So the reads stay far inside both of its clocks: a tenth of
 * the heartbeat timeout (the last heartbeat the SDK sent may be 0.8 of it
 * ago, and no read heartbeats) and a quarter of what is left of its
 * start-to-close timeout.
 */
export function readAheadBudgetMs(info: { heartbeatTimeoutMs?: number; startToCloseTimeoutMs: number }, elapsedMs: number): number {
  const heartbeat = info.heartbeatTimeoutMs ? info.heartbeatTimeoutMs / 10 : Infinity;
  return Math.max(0, Math.min(READ_AHEAD_MAX_MS, heartbeat, (info.startToCloseTimeoutMs - elapsedMs) / 4));
}

/** `offered`: this worker's tools (a run's recorded specs name the same tools with the same schemas). */
export function createReadAhead(execute: ToolExecution, offered: readonly ToolSpec[]): ReadAhead {
  return async function readAhead(input, reply, attemptStartedMs) {
    const ahead = input.readAhead;
    const calls = reply.message.tool_calls ?? [];
    if (!ahead || calls.length === 0) return [];
    // The worker's own specs must qualify too: the run named the tools, this worker runs them.
    const eligible = offered.filter((s) => ahead.tools.includes(s.name) && readsAhead(s));
    const { cancellationSignal, info } = Context.current();
    const budgetMs = readAheadBudgetMs(info, Date.now() - attemptStartedMs);
    if (budgetMs <= 0) return [];
    const timeUp = AbortSignal.timeout(budgetMs);
    const out: ReadAheadOutcome[] = [];
    // What the run's dedupe cache answers, and the reads of this reply: the loop does not run those again.
    const cached = ahead.cached ? new Set(ahead.cached) : null;
    for (const [index, call] of calls.entries()) {
      if (cancellationSignal.aborted || timeUp.aborted) break;
      const parsed = parseCall(call, eligible);
      if (!parsed.ok) break;
      if (cached) {
        const digest = cachedDigest(parsed.toolName, parsed.args);
        if (cached.has(digest)) continue;
        cached.add(digest);
      }
      const started = performance.now();
      try {
        const outcome = await inSpan(input.workflowId, parsed.toolName, call.id, () => untilAborted(timeUp, execute(
          {
            workflowId: input.workflowId,
            chainId: input.chainId,
            callId: call.id,
            idempotencyKey: `${ahead.keyPrefix}${ahead.firstOccurrence + index}`,
            toolName: parsed.toolName,
            args: parsed.args,
            workspace: ahead.workspace,
            traceSeq: input.traceSeq,
            maxResultChars: ahead.maxResultChars,
            ...(ahead.runContextKey !== undefined ? { runContextKey: ahead.runContextKey } : {}),
          },
          timeUp,
        )));
        out.push({ callId: call.id, index, outcome, ms: Math.round(performance.now() - started) });
      } catch {
        // Not offered here, an infrastructure fault, a Stop: the loop runs this call (and the rest) itself.
        break;
      }
    }
    return out;
  };
}

/** The tool's outcome, or a rejection once `signal` fires: a read that ignores its signal is left behind (its result unused). */
function untilAborted<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('read-ahead time is up'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A read ahead is a span of its own under the model call's (`ReadAhead:runTool`,
 * as a tool activity is `RunActivity:runTool`), when the worker traces: a
 * trace still shows every tool call. A no-op tracer otherwise.
 */
function inSpan<T>(workflowId: string, toolName: string, callId: string, work: () => Promise<T>): Promise<T> {
  return trace.getTracer('temporal-agent-harness').startActiveSpan('ReadAhead:runTool', { attributes: { temporalWorkflowId: workflowId, toolName, callId } }, async (span) => {
    try {
      return await work();
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
