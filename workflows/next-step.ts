// What the loop does next, decided from its state alone: drain a pending call,
// stop (which exit, why), or ask the model. The turn cap and the transcript's
// size are checked here, the budget by ./budget.ts's rules. No workflow API: its exits are built
// by ./exits.ts.
import { MAX_CALL_ID_CHARS } from '../common/bounds.js';
import { MAX_TRANSCRIPT_CHARS } from '../common/defaults.js';
import type { ChatMessage, ModelReply, Pricing, RunConfig } from '../common/contract.js';
import { softBudgetExit } from './budget.js';
import { completedExit, failedExit, turnCapExit, type Exit } from './exits.js';
import { recordSpend, type RunState } from './run-state.js';
import { firstPendingCall, type PendingCall } from './tool-calls.js';

// --- stop conditions, checked at the top of every iteration before the model is asked

export const isTurnCapReached = (s: RunState, cfg: RunConfig): boolean => cfg.maxTurns !== null && s.turns >= cfg.maxTurns;
export function limitExit(s: RunState, cfg: RunConfig): Exit | null {
  if (isTurnCapReached(s, cfg)) {
    return turnCapExit(`turn cap of ${cfg.maxTurns} reached`);
  }
  return softBudgetExit(s, cfg);
}

/** What the loop does next, decided from its state alone. */
export type Step = { kind: 'drain'; pending: PendingCall } | { kind: 'stop'; exit: Exit } | { kind: 'ask' };

/**
 * The top of every iteration: drain what the last reply asked for first
 * (resume and approval share this path); only when nothing is pending, check
 * the turn cap and the budget *before* asking the model again.
 */
export function nextStep(s: RunState, cfg: RunConfig): Step {
  const pending = firstPendingCall(s.messages);
  if (pending) return { kind: 'drain', pending };
  const exit = limitExit(s, cfg) ?? transcriptTooBig(s);
  return exit ? { kind: 'stop', exit } : { kind: 'ask' };
}

/**
 * Takes one model reply: it is paid for whatever it says, so it is counted
 * first; then it joins the transcript unless it would break the protocol; a
 * reply without tool calls ends the run.
 */
export function takeReply(s: RunState, reply: ModelReply, pricing: Pricing, chargedUsd?: number): Exit | null {
  recordSpend(s, reply, pricing, chargedUsd);
  const problem = replyProtocolProblem(s.messages, reply);
  if (problem) return failedExit(`protocol error: ${problem}`, 'ProtocolError');
  s.messages.push(reply.message);
  const calls = reply.message.tool_calls?.length ?? 0;
  if (calls > 0) {
    s.lastReplyFirstCall = s.callsProposed + 1;
    s.callsProposed += calls;
  }
  if (calls > 0) return null;
  const output = reply.message.content ?? '';
  const cut = reply.finishReason === 'length' ? ' (cut at its reply length cap)' : '';
  const reason = output.trim() ? `the model answered${cut}` : `the model answered with an empty reply (no text, no tool calls)${cut}`;
  return completedExit(reason, output);
}

/** A transcript this large could not travel in one payload: stop with the reason rather than get stuck. */
export function transcriptTooBig(s: RunState): Exit | null {
  const chars = JSON.stringify(s.messages).length;
  if (chars <= MAX_TRANSCRIPT_CHARS) return null;
  const msg =
    `the transcript is ${chars} characters, over the ${MAX_TRANSCRIPT_CHARS} the harness allows: the next model call's ` +
    "input would approach Temporal's 2 MiB payload limit. Start a new run with a summary of this one.";
  return failedExit(msg, 'TranscriptTooLarge');
}


/** C0 and C1 controls, and the line and paragraph separators: an id with them cannot be typed, logged or shown safely. */
const UNSAFE_ID_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A call id for an error text: quoted, and cut when long (the text travels into the exit reason). */
const shownId = (id: string): string => JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id);

/**
 * A reply the transcript cannot hold without breaking the protocol's two rules:
 * a call without an id (its result could not be linked to it) or an id used
 * twice in one reply (one of the calls would be left without its result). An
 * id an earlier turn used is fine: results follow their reply, and the
 * harness names calls by occurrence, not by id. An id too long or with
 * control characters is refused too, like an empty one, rather than rewritten:
 * no real provider sends one, and the id a person approves, a signature
 * covers and the trace shows must be the one the model sent.
 */
export function replyProtocolProblem(_messages: readonly ChatMessage[], reply: ModelReply): string | null {
  const calls = reply.message.tool_calls ?? [];
  const seen = new Set<string>();
  for (const c of calls) {
    if (typeof c.id !== 'string' || c.id === '') return 'the model returned a tool call without an id: its result could not be linked to it';
    if (c.id.length > MAX_CALL_ID_CHARS) {
      return `the model returned a tool call id of ${c.id.length} characters (${shownId(c.id)}): the harness takes call ids of at most ${MAX_CALL_ID_CHARS} characters`;
    }
    if (UNSAFE_ID_CHARS.test(c.id)) return `the model returned a tool call id with control characters (${shownId(c.id)}): the harness takes call ids of printable characters only`;
    if (seen.has(c.id)) return `the model reused tool call id ${shownId(c.id)} within one reply: one of its calls would be left without a result`;
    if (!c.function || typeof c.function.name !== 'string') return `tool call ${c.id} has no function name`;
    seen.add(c.id);
  }
  return null;
}
