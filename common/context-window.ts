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
import type { ChatMessage, ContextPolicy } from './contract.js';


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
const SUMMARIZED = '[the harness summarized';
const omittedNote = (turns: number): string =>
  `${OMITTED} the ${turns} earliest turns of this run to stay within the model's context window; their tool results are gone. Call the tools again if you need them.]`;
const summaryNote = (turns: number, summary: string): string =>
  `${SUMMARIZED} the ${turns} earliest turns of this run to stay within the model's context window; their tool results are gone (call the tools again if you need them). Summary: ${summary}]`;
const isNote = (m: { role: string; content?: unknown }): boolean =>
  m.role === 'user' && typeof m.content === 'string' && (m.content.startsWith(OMITTED) || m.content.startsWith(SUMMARIZED));

/**
 * How many turns a transcript's omission or summary note says were folded
 * away (0 without one). The scripted provider reads it too, to keep counting turns.
 */
export function omittedTurns(messages: readonly { role: string; content?: unknown }[]): number {
  const note = messages.find(isNote);
  return Number(/the (\d+) earliest/.exec(String(note?.content ?? ''))?.[1] ?? 0);
}

/** The instruction of a summary request (the scripted provider recognizes it). */
export const SUMMARY_INSTRUCTION =
  'You summarize the earlier part of an agent run for the agent itself. Keep every fact, file name, number and decision it will need; drop pleasantries. Answer with the summary only, in at most 200 words.';

/** Which old turns a summary would fold, and the request that asks the model for it. */
export interface SummaryPlan {
  /** Index of the first message folded (the previous note, when there is one). */
  from: number;
  /** Index after the last message folded. */
  to: number;
  /** Turns folded in all, earlier summaries included. */
  turns: number;
  estimatedBefore: number;
  estimatedAfter: number;
  /** The summary request: the instruction, then the folded turns as text. */
  request: ChatMessage[];
}

/**
 * When the next prompt would pass the high watermark, the oldest turns (and
 * the previous summary) to fold into one summary so the prompt falls to the
 * low watermark; null when it fits, or when only recent turns are left.
 */
export function planSummary(messages: readonly ChatMessage[], lastPromptTokens: number, messagesAtLastCall: number, policy: ContextPolicy): SummaryPlan | null {
  const estimate = lastPromptTokens + tokensOf(messages.slice(messagesAtLastCall));
  if (estimate <= policy.windowTokens * HIGH_WATERMARK) return null;
  const head = startOfTurns(messages);
  const from = head > 0 && isNote(messages[head - 1]) ? head - 1 : head;
  const { to, turns, after } = oldestTurns(messages, head, startOfRecentTurns(messages, policy.keepRecentTurns), estimate, policy.windowTokens * LOW_WATERMARK);
  if (turns === 0) return null;
  const folded = messages.slice(from, to).map(asText).join('\n');
  return {
    from,
    to,
    turns: omittedTurns(messages) + turns,
    estimatedBefore: estimate,
    // The note replaces what was folded: a summary of at most ~200 words.
    estimatedAfter: Math.max(0, Math.round(after + estimateTokens(1600))),
    request: [
      { role: 'system', content: SUMMARY_INSTRUCTION },
      { role: 'user', content: `The run's task: ${messages.find((m) => m.role === 'user')?.content ?? ''}\n\nThe turns to summarize:\n${folded}` },
    ],
  };
}

/** Replaces the folded turns with one note carrying the summary, in place. */
export function applySummary(messages: ChatMessage[], plan: SummaryPlan, summary: string): void {
  messages.splice(plan.from, plan.to - plan.from, { role: 'user', content: summaryNote(plan.turns, summary.trim() || '(the model wrote no summary)') });
}

/** One message as plain text for a summary request. */
function asText(m: ChatMessage): string {
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((c) => `${c.function.name}(${c.function.arguments}) [${c.id}]`).join(', ');
    return `assistant: ${m.content ?? ''}${calls ? ` called ${calls}` : ''}`;
  }
  if (m.role === 'tool') return `tool ${m.name} [${m.tool_call_id}]: ${m.content}`;
  return `${m.role}: ${m.content}`;
}

/**
 * Elides the oldest tool results, in place, when the next prompt would pass
 * the high watermark. `lastPromptTokens` is the last request's measured size
 * and `messagesAtLastCall` how many messages it carried.
 */
export function elideForWindow(messages: ChatMessage[], lastPromptTokens: number, messagesAtLastCall: number, policy: ContextPolicy): Elision | null {
  const estimate = lastPromptTokens + tokensOf(messages.slice(messagesAtLastCall));
  if (estimate <= policy.windowTokens * HIGH_WATERMARK) return null;
  const target = policy.windowTokens * LOW_WATERMARK;
  const protectedFrom = startOfRecentTurns(messages, policy.keepRecentTurns);
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
  const head = startOfTurns(messages);
  const hasNote = head > 0 && isNote(messages[head - 1]);
  const alreadyDropped = omittedTurns(messages);
  const fold = oldestTurns(messages, head, protectedFrom, after, target);
  const droppedTurns = fold.turns;
  after = fold.after;
  messages.splice(head, fold.to - head);
  if (droppedTurns > 0) {
    const note: ChatMessage = { role: 'user', content: omittedNote(alreadyDropped + droppedTurns) };
    if (hasNote) messages[head - 1] = note;
    else messages.splice(head, 0, note);
  }
  return elided || droppedTurns ? { elided, droppedTurns, estimatedBefore: estimate, estimatedAfter: Math.max(0, Math.round(after)) } : null;
}

/** Estimated tokens of these messages as they travel (JSON). */
const tokensOf = (messages: readonly ChatMessage[]): number => messages.reduce((n, m) => n + estimateTokens(JSON.stringify(m).length), 0);

/**
 * The oldest whole turns from `head` (an assistant message with all its
 * results, never reaching into the protected recent turns) whose removal
 * brings the estimate from `after` down to `target`: where they end, how many,
 * and the estimate without them.
 */
function oldestTurns(messages: readonly ChatMessage[], head: number, protectedFrom: number, after: number, target: number): { to: number; turns: number; after: number } {
  let to = head;
  let turns = 0;
  while (after > target && to < protectedFrom) {
    const end = endOfTurn(messages, to);
    if (end > protectedFrom) break;
    after -= tokensOf(messages.slice(to, end));
    to = end;
    turns += 1;
  }
  return { to, turns, after };
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
