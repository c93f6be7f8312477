// A model's tool calls, read by the loop: which call is pending, whether it
// names an enabled tool with valid arguments, its cache and idempotency keys,
// and the tools a run may call. No Temporal import.
import { argumentProblem } from '../common/tool-args.js';
import { canonicalJson } from '../common/args-hash.js';
import { boundedWorkflowId } from '../common/bounds.js';
import { nestingDepth } from '../common/json-depth.js';
import type { ToolSpec } from '../common/tool-spec.js';
import type { ChatMessage, DedupePolicy, ToolCall, ToolName } from '../common/contract.js';
import type { RunState } from './run-state.js';

export interface PendingCall {
  call: ToolCall;
  /** Index in the transcript of the assistant message that asked for it. */
  messageIndex: number;
}

/** The first call of the last assistant message that has no tool result yet. */
export function firstPendingCall(messages: readonly ChatMessage[]): PendingCall | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'tool') continue;
    if (m.role !== 'assistant' || !m.tool_calls?.length) return null;
    const answered = new Set(
      messages.slice(i + 1).flatMap((r) => (r.role === 'tool' ? [r.tool_call_id] : [])),
    );
    const call = m.tool_calls.find((c) => !answered.has(c.id));
    return call ? { call, messageIndex: i } : null;
  }
  return null;
}

/**
 * A sub-agent child's workflow id (`…/m1/r1/research`): readable, and stable
 * across replays. A long one (a long parent id, a grandchild's) is cut and
 * hashed (common/bounds.ts): the server refuses ids over 1,000 bytes, and a
 * refused child start fails the parent's workflow task again and again.
 */
export function subAgentChildId(workflowId: string, pending: PendingCall, toolName: string): string {
  return boundedWorkflowId(`${workflowId}/m${pending.messageIndex}/${pending.call.id}/${toolName}`, `/${toolName.slice(0, 64)}`);
}

// --- tool calls

export const MAX_ARGUMENT_CHARS = 16_384;
/** How deep a call's arguments may nest (the arguments object itself is level 1). */
export const MAX_ARGUMENT_DEPTH = 64;


export type ParsedCall =
  | { ok: true; toolName: ToolName; spec: ToolSpec; args: Record<string, unknown> }
  | { ok: false; toolName: string; error: string };

/**
 * Checks what the workflow can check without I/O: a known, enabled tool and
 * arguments that fit its schema. Runs before approval, cache or activity: a
 * person is never asked about a call that could not run.
 */
export function parseCall(call: ToolCall, enabled: readonly ToolSpec[]): ParsedCall {
  const name = call.function.name;
  const spec = enabled.find((s) => s.name === name);
  if (!spec) {
    return { ok: false, toolName: name, error: `unknown tool ${JSON.stringify(name.slice(0, 100))}. Available tools: ${enabled.map((s) => s.name).join(', ')}.` };
  }
  // Huge arguments are refused before they are parsed, traced or sent to an activity.
  if (call.function.arguments.length > MAX_ARGUMENT_CHARS) {
    return {
      ok: false,
      toolName: name,
      error: `the arguments of ${name} are ${call.function.arguments.length} characters long; the limit is ${MAX_ARGUMENT_CHARS}.`,
    };
  }
  let args: unknown;
  try {
    args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch {
    // Our own words, not the JSON parser's: its text differs between Node versions, and this goes into the transcript.
    return { ok: false, toolName: name, error: `the arguments of ${name} are not valid JSON; send one JSON object, like {"path": "errors.log"}.` };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { ok: false, toolName: name, error: `the arguments of ${name} must be a JSON object.` };
  }
  // Before anything walks them (the schema check, hashes, the trace, the
  // payload converter's JSON.stringify, which overflows the stack a few
  // thousand levels down): 10 KB of brackets nest 5,000 deep.
  const depth = nestingDepth(args, MAX_ARGUMENT_DEPTH);
  if (depth > MAX_ARGUMENT_DEPTH) {
    return { ok: false, toolName: name, error: `the arguments of ${name} are nested more than ${MAX_ARGUMENT_DEPTH} levels deep; the limit is ${MAX_ARGUMENT_DEPTH}.` };
  }
  const problem = argumentProblem(spec, args as Record<string, unknown>);
  if (problem) return { ok: false, toolName: name, error: problem };
  return { ok: true, toolName: name, spec, args: args as Record<string, unknown> };
}

export function isCacheable(spec: ToolSpec, policy: DedupePolicy): boolean {
  switch (policy) {
    case 'off':
      return false;
    case 'all':
      return true;
    case 'readOnly':
      return spec.readOnly;
  }
}

/** Same tool, same arguments (key order ignored) -> same key. */
export function cacheKey(toolName: string, args: unknown): string {
  return `${toolName}:${canonicalJson(args)}`;
}

/**
 * The idempotency key of one logical operation: this call of this run chain,
 * stable across retries, replays and continue-as-new. The chain id (the first
 * execution's run id) keeps a workflow id used again from finding the earlier
 * run's effects; the call's occurrence number (counted by the workflow) keeps
 * a provider's reused call id from finding an earlier call's.
 */
export function idempotencyKey(workflowId: string, chainId: string, pending: PendingCall, s: RunState): string {
  return `${workflowId}@${chainId}/call${callOccurrence(s, pending)}`;
}

/** The pending call's occurrence number in the run (1, 2, …). */
export function callOccurrence(s: RunState, pending: PendingCall): number {
  const m = s.messages[pending.messageIndex];
  const index = m.role === 'assistant' ? (m.tool_calls ?? []).indexOf(pending.call) : -1;
  return s.lastReplyFirstCall + Math.max(0, index);
}

