// What the transcript records when a tool call ends in something other than a
// plain result: a failure (as text the model reads, per the run's toolErrors
// policy; a permanent one or the `fatal` policy ends the run), a call a Stop
// cut short, and the dedupe cache's copy of a result worth reusing.
import { MAX_CACHE_CHARS } from '../common/defaults.js';
import { capToolResult, stoppedText, toolErrorText, toolResultMessage } from '../common/transcript-text.js';
import type { RunContext } from './run-context.js';
import { rememberResult } from './run-state.js';
import type { PendingCall } from './tool-calls.js';
import { CANCELLED, failedExit, type Exit } from './exits.js';

/** A tool error becomes transcript text per policy; a permanent one or the `fatal` policy stops the run. */
export function toolFailed(ctx: RunContext, pending: PendingCall, toolName: string, error: string, permanent: boolean): Exit | null {
  ctx.metrics.toolErrors.add(1, { tool: toolName, kind: permanent ? 'permanent' : 'error' });
  const policy = ctx.cfg.toolErrors;
  // The result is written even when the run stops, so the transcript stays valid and resumable.
  const text = toolErrorText(capToolResult(error, ctx.cfg.maxToolResultChars), policy === 'generic' ? 'generic' : 'describe');
  ctx.state.messages.push(toolResultMessage(pending.call, text));
  if (permanent && ctx.cfg.permanentToolErrors === 'stop') {
    const msg = `permanent tool error in ${toolName} (call ${pending.call.id}), retrying cannot help: ${error}`;
    return failedExit(msg, 'PermanentToolError');
  }
  if (policy === 'fatal') {
    const msg = `tool ${toolName} failed (call ${pending.call.id}) and toolErrors is "fatal": ${error}`;
    return failedExit(msg, 'ToolError');
  }
  return null;
}

/** Keeps a result in the dedupe cache (bounded to MAX_CACHE_CHARS in runs that asked the patch). */
export function remember(ctx: RunContext, key: string, content: string): void {
  rememberResult(ctx.state, key, content, ctx.patches.boundedCache ? MAX_CACHE_CHARS : null);
}

/**
 * The run was stopped while this call ran, and the tool reported that it
 * stopped without finishing (a write that had already acted reports its
 * result instead: the workflow waits for it). The transcript says so, so it
 * stays valid and tells the truth.
 */
export function recordStopped(ctx: RunContext, pending: PendingCall, toolName: string, started: number): void {
  const reason = ctx.stop.reason ?? CANCELLED;
  ctx.state.toolRuns += 1;
  ctx.state.messages.push(toolResultMessage(pending.call, stoppedText(toolName, reason)));
  ctx.trace.emit('tool_result', { toolName, callId: pending.call.id, ms: Date.now() - started, ok: false, stopped: true });
  ctx.metrics.toolErrors.add(1, { tool: toolName, kind: 'stopped' });
}
