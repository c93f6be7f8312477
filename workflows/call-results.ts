// The one place a tool call's result is recorded: the transcript's tool
// message, the `tool_result` trace line where the call did not run as an
// activity, and the tool-error metric. Each way a call can end has its
// function: a result, a cached result, a declined call, a call not run, a
// failure (as text the model reads, per the run's toolErrors policy; a
// permanent one or the `fatal` policy ends the run), a call a Stop cut short;
// and the dedupe cache's copy of a result worth reusing.
import { MAX_CACHE_CHARS } from '../common/defaults.js';
import { capToolResult, declinedText, notRunText, stoppedText, toolErrorText, toolResultMessage, type Decision } from '../common/transcript-text.js';
import { noteFiled } from '../common/message-refs.js';
import type { ToolCall } from '../common/contract.js';
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

/** Keeps a result in the dedupe cache, bounded to MAX_CACHE_CHARS (it crosses continue-as-new with the state). */
export function remember(ctx: RunContext, key: string, content: string): void {
  rememberResult(ctx.state, key, content, MAX_CACHE_CHARS);
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

/** The tool's own result (a tool activity's, cut to maxToolResultChars there, or a child's answer); `ref`: where the activity filed it. */
export function recordResult(ctx: RunContext, call: ToolCall, content: string, ref?: string): void {
  const message = toolResultMessage(call, content);
  ctx.state.messages.push(message);
  if (ref !== undefined) noteFiled(ctx.state, message, ref);
}

/** A result the dedupe cache answered: the call did not run. */
export function recordCached(ctx: RunContext, call: ToolCall, toolName: string, content: string): void {
  ctx.state.messages.push(toolResultMessage(call, content));
  ctx.trace.emit('tool_result', { toolName, callId: call.id, ms: 0, ok: true, cached: true });
}

/**
 * A call a person declined (a rejection, or a steering message that
 * interrupts): the transcript says who and why (empty under
 * experimentalEmptyRejection); `interrupted` marks a steer's.
 */
export function recordDeclined(ctx: RunContext, call: ToolCall, toolName: string, decision: Decision, opts: { empty?: boolean; interrupted?: boolean } = {}): void {
  ctx.state.messages.push(toolResultMessage(call, opts.empty ? '' : declinedText(toolName, decision)));
  ctx.trace.emit('tool_result', { toolName, callId: call.id, ms: 0, ok: false, declined: true, ...(opts.interrupted ? { interrupted: true } : {}) });
  ctx.metrics.toolErrors.add(1, { tool: toolName, kind: 'declined' });
}

/** A call that is not run (the budget cannot pay for it, or the run stops first): `why` in the transcript, `notRun` on its trace line. */
export function recordNotRun(ctx: RunContext, call: ToolCall, toolName: string, why: string, notRun: string): void {
  ctx.state.messages.push(toolResultMessage(call, notRunText(toolName, why)));
  ctx.trace.emit('tool_result', { toolName, callId: call.id, ms: 0, ok: false, notRun });
}
