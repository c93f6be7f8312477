// Keeps a long run inside the model's context window by eliding old tool
// results: the message stays (so every call keeps its one result and the
// protocol holds), its text becomes a short stub the model can read — which
// call, how long it was, and that calling the tool again brings it back. When
// stubs alone are not enough (they too grow with the turns), whole old turns
// are dropped, an assistant message together with all its results, and one
// note after the task says how many.
// Pure and deterministic: no Temporal import, the same transcript always gives
// the same cut.
//
// The size of the next prompt is known, not guessed: the last reply's usage
// says how many tokens the last request had; only what was appended since is
// estimated (conservatively, from its length). Elision starts above a high
// watermark and goes down to a low one, so it happens in batches rather than
// every turn (each cut changes the prompt's prefix, which a provider's prompt
// cache then misses).
import type { ChatMessage } from './types';

export interface ContextPolicy {
  /** The model's context window in tokens (prompt and tool definitions included). */
  windowTokens: number;
  strategy: 'elide';
  /** The most recent turns are never elided. */
  keepRecentTurns: number;
}

export const HIGH_WATERMARK = 0.8;
export const LOW_WATERMARK = 0.5;
/** Tokens for a text of this many characters, on the safe side (logs and JSON run ~3 characters a token). */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 3);

const ELIDED = '[elided by the harness';

export function elidedStub(toolName: string, callId: string, chars: number): string {
  return `${ELIDED} to stay within the model's context window: the result of ${toolName} call ${callId} (${chars} characters). Call the tool again if you need it.]`;
}

export const isElided = (m: ChatMessage): boolean => m.role === 'tool' && m.content.startsWith(ELIDED);

export interface Elision {
  /** How many tool results were replaced by a stub. */
  elided: number;
  /** How many whole old turns were dropped (when stubs alone were not enough). */
  droppedTurns: number;
  estimatedBefore: number;
  estimatedAfter: number;
}

const OMITTED = '[the harness omitted';
const omittedNote = (turns: number): string =>
  `${OMITTED} the ${turns} earliest turns of this run to stay within the model's context window; their tool results are gone. Call the tools again if you need them.]`;
const isOmittedNote = (m: ChatMessage): boolean => m.role === 'user' && m.content.startsWith(OMITTED);

/**
 * How many turns a transcript's omission note says were dropped (0 without
 * one). The scripted provider reads it too, to keep counting turns.
 */
export function omittedTurns(messages: readonly { role: string; content?: unknown }[]): number {
  const note = messages.find((m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith(OMITTED));
  return Number(/the (\d+) earliest/.exec(String(note?.content ?? ''))?.[1] ?? 0);
}

/**
 * Elides the oldest tool results, in place, when the next prompt would pass
 * the high watermark. `lastPromptTokens` is the last request's measured size
 * and `messagesAtLastCall` how many messages it carried.
 */
export function elideForWindow(messages: ChatMessage[], lastPromptTokens: number, messagesAtLastCall: number, policy: ContextPolicy): Elision | null {
  const added = messages.slice(messagesAtLastCall).reduce((n, m) => n + estimateTokens(JSON.stringify(m).length), 0);
  const estimate = lastPromptTokens + added;
  if (estimate <= policy.windowTokens * HIGH_WATERMARK) return null;
  const target = policy.windowTokens * LOW_WATERMARK;
  let protectedFrom = startOfRecentTurns(messages, policy.keepRecentTurns);
  let elided = 0;
  let after = estimate;
  for (let i = 0; i < protectedFrom && after > target; i++) {
    const m = messages[i];
    if (m.role !== 'tool' || isElided(m)) continue;
    const stub = elidedStub(m.name, m.tool_call_id, m.content.length);
    if (stub.length >= m.content.length) continue;
    after -= estimateTokens(m.content.length) - estimateTokens(stub.length);
    messages[i] = { ...m, content: stub };
    elided += 1;
  }
  // Stubs still grow with the turns: over a long run, drop whole old turns (an
  // assistant message with all its results, so no call loses its result) and
  // say so in one note after the task.
  let droppedTurns = 0;
  const head = startOfTurns(messages);
  const hasNote = head > 0 && isOmittedNote(messages[head - 1]);
  const alreadyDropped = omittedTurns(messages);
  while (after > target && head < protectedFrom) {
    const end = endOfTurn(messages, head);
    if (end > protectedFrom) break;
    after -= messages.slice(head, end).reduce((n, m) => n + estimateTokens(JSON.stringify(m).length), 0);
    messages.splice(head, end - head);
    protectedFrom -= end - head;
    droppedTurns += 1;
  }
  if (droppedTurns > 0) {
    const note: ChatMessage = { role: 'user', content: omittedNote(alreadyDropped + droppedTurns) };
    if (hasNote) messages[head - 1] = note;
    else messages.splice(head, 0, note);
  }
  return elided || droppedTurns ? { elided, droppedTurns, estimatedBefore: estimate, estimatedAfter: Math.max(0, Math.round(after)) } : null;
}

/** The index of the first assistant message: what comes before (system, task, the omission note) is always kept. */
function startOfTurns(messages: readonly ChatMessage[]): number {
  const i = messages.findIndex((m) => m.role === 'assistant');
  return i < 0 ? messages.length : i;
}

/** The end (exclusive) of the turn starting at `start`: its assistant message and the results that follow it. */
function endOfTurn(messages: readonly ChatMessage[], start: number): number {
  let i = start + 1;
  while (i < messages.length && messages[i].role === 'tool') i++;
  return i;
}

/** The index of the assistant message that starts the last `turns` turns (messages.length when 0). */
function startOfRecentTurns(messages: readonly ChatMessage[], turns: number): number {
  if (turns <= 0) return messages.length;
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'assistant' && ++seen === turns) return i;
  }
  return 0;
}
