// A model's tool calls, read by the loop: which call is pending, whether it
// names an enabled tool with valid arguments, its cache and idempotency keys,
// and the tools a run may call. No Temporal import.
import { boundedWorkflowId } from '../common/bounds.js';
import type { ToolSpec } from '../common/tool-spec.js';
import type { ChatMessage, DedupePolicy, ToolCall } from '../common/contract.js';
import type { RunState } from './run-state.js';

// Parsing a call lives in common/ (the model activity's read-ahead parses the same way); re-exported for the loop's modules.
export { cacheKey, MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH, parseCall, type ParsedCall } from '../common/parse-call.js';

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

/**
 * The idempotency key of one logical operation: this call of this run chain,
 * stable across retries, replays and continue-as-new. The chain id (the first
 * execution's run id) keeps a workflow id used again from finding the earlier
 * run's effects; the call's occurrence number (counted by the workflow) keeps
 * a provider's reused call id from finding an earlier call's.
 */
export function idempotencyKey(workflowId: string, chainId: string, pending: PendingCall, s: RunState): string {
  return `${callKeyPrefix(workflowId, chainId)}${callOccurrence(s, pending)}`;
}

/** Every idempotency key of a run chain is this and the call's occurrence number (read-ahead sends it to the model call). */
export const callKeyPrefix = (workflowId: string, chainId: string): string => `${workflowId}@${chainId}/call`;

/** The pending call's occurrence number in the run (1, 2, …). */
export function callOccurrence(s: RunState, pending: PendingCall): number {
  const m = s.messages[pending.messageIndex];
  const index = m.role === 'assistant' ? (m.tool_calls ?? []).indexOf(pending.call) : -1;
  return s.lastReplyFirstCall + Math.max(0, index);
}

