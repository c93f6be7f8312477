// What the transcript says about a tool call: its result message, and the
// words the model reads when a call failed, was declined, was not run or was
// stopped. Shared by the workflow and the tool activity, which files the same
// message shape in the message store.
import type { ChatMessage, ToolCall, ToolErrorPolicy } from './contract.js';

/**
 * Cuts a tool result to `max` characters with a note the model can read. Every
 * result lands in history (and in every later model call's input), and one
 * payload over 2 MiB would leave the workflow task failing forever.
 */
export function capToolResult(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[truncated by the harness: the result was ${text.length} characters; only the first ${max} are shown]`;
}

/** What the model reads when a tool failed, per policy (`fatal` never reaches the transcript). */
export function toolErrorText(error: string, policy: Exclude<ToolErrorPolicy, 'fatal'>): string {
  return policy === 'describe' ? `Error: ${error}` : 'Error: the tool failed.';
}

export interface Decision {
  /** The call decided on; absent in decisions carried from older executions. */
  callId?: string;
  decision: 'approve' | 'reject';
  reason: string | null;
  by: string | null;
  /** The call's argsHash, when the decision named it (and so was bound to those arguments). */
  argsHash?: string;
  /** The decision was a steer with `interrupt`: its message is the reason. */
  interrupt?: true;
}

/** A rejected call's result: the decision, in words, so the model cannot claim it happened. */
export function declinedText(toolName: string, d: Decision): string {
  const who = d.by ? ` by ${d.by}` : '';
  const why = d.reason ? ` Reason: ${d.reason}` : ' No reason was given.';
  return `The user declined this ${toolName} call${who}; it was not run and nothing changed.${why}`;
}

/** The result of a call the harness decided not to run: said in words, like a rejection. */
export function notRunText(toolName: string, why: string): string {
  return `The harness did not run this ${toolName} call because ${why}; nothing changed.`;
}

/** The result of a call stopped by a Stop before it finished (the tool reported it did not complete). */
export function stoppedText(toolName: string, reason: string): string {
  return `The run was stopped (${reason}) while this ${toolName} call was running; the tool stopped without finishing.`;
}

/** One line naming a tool call for the Web UI: `read_file errors.log`, `delete_file access.log approved by alice`. */
export function callSummary(toolName: string, args: Record<string, unknown>, decision: Decision | null): string {
  const shown = Object.values(args)
    .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
    .join(' ')
    .slice(0, 120);
  const decided = decision?.decision === 'approve' ? ` approved${decision.by ? ` by ${decision.by}` : ''}` : '';
  return `${toolName}${shown ? ` ${shown}` : ''}${decided}`;
}

export function toolResultMessage(call: ToolCall, content: string): ChatMessage {
  return toolMessage(call.id, call.function.name, content);
}

/** The one shape of a tool message: the tool activity files this exact JSON in the message store. */
export function toolMessage(callId: string, toolName: string, content: string): ChatMessage {
  return { role: 'tool', tool_call_id: callId, name: toolName, content };
}
