// Forks: a new run that starts from the first N turns of another run's
// transcript (or of an exported file), with the tool results as the source
// recorded them: nothing of those turns runs or is paid again. Pure: the
// workflow, the activities and the CLI all use it.
import type { ChatMessage } from './contract.js';

/** A turn is one model reply and the results of its tool calls. */
export type Cut = { ok: true; messages: ChatMessage[]; sourceTurns: number } | { ok: false; reason: string };

/**
 * The opening (system and user messages before the first reply), then the
 * first `atTurn` replies each with its tool results. A turn whose calls do not
 * all have a result (the source is parked on one, or was stopped before it
 * ran) is refused rather than cut short: the fork would have to run or
 * re-decide that call, and a decision of the source is never inherited.
 */
export function cutAtTurn(messages: readonly ChatMessage[], atTurn: number): Cut {
  const replies = messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  if (atTurn > replies.length) {
    return { ok: false, reason: `the source has ${replies.length} turn${replies.length === 1 ? '' : 's'}, so atTurn ${atTurn} is past its end` };
  }
  if (atTurn === 0) return { ok: true, messages: messages.slice(0, replies[0] ?? messages.length), sourceTurns: replies.length };
  const at = replies[atTurn - 1];
  const reply = messages[at] as Extract<ChatMessage, { role: 'assistant' }>;
  let end = at + 1;
  while (end < messages.length && messages[end].role === 'tool') end += 1;
  const answered = new Set(messages.slice(at + 1, end).map((m) => (m.role === 'tool' ? m.tool_call_id : '')));
  const open = (reply.tool_calls ?? []).filter((c) => !answered.has(c.id));
  if (open.length) {
    const calls = open.map((c) => `${c.function.name} call ${c.id}`).join(', ');
    return {
      ok: false,
      reason: `turn ${atTurn} is not finished in the source: ${calls} has no result (the source is parked on it or stopped before running it); fork at turn ${atTurn - 1}, or decide the call in the source first`,
    };
  }
  return { ok: true, messages: messages.slice(0, end), sourceTurns: replies.length };
}

/** The sum of the first `turns` costs, or null when the list does not cover them. */
export function costOfTurns(costs: readonly (number | undefined)[], turns: number): number | null {
  let sum = 0;
  for (let t = 0; t < turns; t++) {
    const c = costs[t];
    if (c === undefined) return null;
    sum += c;
  }
  return Math.round(sum * 1e12) / 1e12;
}

/** What `agent-harness export` writes and `fork --from-file` reads. */
export const EXPORT_FORMAT = 'agent-harness/run-export';
/** The version of that format; a file of another is refused. */
export const EXPORT_VERSION = 1;
