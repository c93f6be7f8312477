// What a run knows, as plain JSON that crosses continue-as-new, and the pure
// updates the loop makes to it: spend, children's spend, the dedupe cache.
// No Temporal import: test/unit/loop.test.ts checks these in microseconds.
import type { StoreKnowledge } from '../common/message-refs.js';
import { addUsd } from '../common/budget-math.js';
import type { BudgetRaise, OverReservationFlag, ChildSpend, ChatMessage, ModelReply, Pricing, RunConfig, Usage } from '../common/contract.js';
import { turnCostUsd } from '../common/turn-cost.js';

/** Everything the loop knows. Plain JSON so it can cross continue-as-new. (StoreKnowledge: what the message store holds.) */
export interface RunState extends StoreKnowledge {
  messages: ChatMessage[];
  turns: number;
  toolRuns: number;
  costUsd: number;
  usage: Usage;
  promptTokensPerTurn: number[];
  /** Dedupe cache: cacheKey(tool, args) -> the tool result text. */
  cache: Record<string, string>;
  /** Sub-agent spend, also counted in costUsd and usage. */
  children: ChildSpend;
  /** How many messages the last model request carried (its measured size is the last promptTokensPerTurn); 0 before the first. */
  messagesAtLastCall: number;
  /**
   * Tool calls the model has proposed in this run, counted by the workflow:
   * each call's occurrence number names its decision and its effects, so a
   * provider that sends an id again (many reuse `call_0` every turn) never
   * meets an earlier call's decision or ledger record.
   */
  callsProposed: number;
  /** The occurrence number of the last reply's first call (its others follow in order). */
  lastReplyFirstCall: number;
  /** Turns whose reply carried no usage: priced from the harness's own token count. */
  usageEstimatedTurns: number;
  /** Hard budget: the raises people made (the budget itself is cfg.maxBudgetUsd, raised in place). */
  budgetRaises: BudgetRaise[];
  /** Hard budget: the reply whose usage passed its hold (the run stopped on it); null until one does. */
  usageOverReservation: OverReservationFlag | null;
  /** outputSchema: final answers that missed it so far (absent: none). */
  outputMisses?: number;
}

export const noChildren = (): ChildSpend => ({ runs: 0, costUsd: 0, usage: { promptTokens: 0, completionTokens: 0 } });

/** Adds a finished child run's spend to the parent: its budget pays for its children. */
export function recordChildSpend(s: RunState, costUsd: number, usage: Usage): void {
  const c = s.children;
  s.children = {
    runs: c.runs + 1,
    costUsd: addUsd(c.costUsd, costUsd),
    usage: { promptTokens: c.usage.promptTokens + usage.promptTokens, completionTokens: c.usage.completionTokens + usage.completionTokens },
  };
  addSpend(s, costUsd, usage);
}

/** Adds spend to the run's totals: its turns, its summaries and its children all pay from them. */
function addSpend(s: RunState, costUsd: number, usage: Usage): void {
  s.costUsd = addUsd(s.costUsd, costUsd);
  s.usage.promptTokens += usage.promptTokens;
  s.usage.completionTokens += usage.completionTokens;
}

export function initialState(cfg: RunConfig): RunState {
  const messages: ChatMessage[] = [];
  if (cfg.system !== null) messages.push({ role: 'system', content: cfg.system });
  messages.push({ role: 'user', content: cfg.task });
  return stateFrom(messages, {});
}

/** The totals a run starts with besides its transcript: a fresh run's are all zero; a resumed run's are its source's. */
export type StartTotals = Partial<Pick<RunState, 'turns' | 'toolRuns' | 'costUsd' | 'usage' | 'promptTokensPerTurn' | 'usageEstimatedTurns' | 'children'>>;

/**
 * A first state from a transcript (a fresh run's opening, a resumed run's or a
 * fork's cut) and the totals it starts with. The calls the transcript holds
 * are counted: a new workflow id names the run's keys, so counting from them is enough.
 */
export function stateFrom(messages: ChatMessage[], totals: StartTotals): RunState {
  const calls = messages.map((m) => (m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0));
  const lastCalls = [...calls].reverse().find((n) => n > 0) ?? 0;
  const callsProposed = calls.reduce((a, b) => a + b, 0);
  return {
    messages,
    turns: totals.turns ?? 0,
    toolRuns: totals.toolRuns ?? 0,
    costUsd: totals.costUsd ?? 0,
    usage: { ...(totals.usage ?? { promptTokens: 0, completionTokens: 0 }) },
    promptTokensPerTurn: [...(totals.promptTokensPerTurn ?? [])],
    cache: {},
    children: totals.children ?? noChildren(),
    messagesAtLastCall: 0,
    callsProposed,
    lastReplyFirstCall: callsProposed - lastCalls + 1,
    usageEstimatedTurns: totals.usageEstimatedTurns ?? 0,
    budgetRaises: [],
    usageOverReservation: null,
  };
}

/**
 * Counts a reply the moment it arrives: the turn, its tokens, its cost. The
 * message is appended separately, after it has been checked. `chargedUsd`: a
 * hard budget charges at most the call's hold (common/budget-math settleReply).
 */
export function recordSpend(s: RunState, reply: ModelReply, pricing: Pricing, chargedUsd?: number): void {
  s.turns += 1;
  if (reply.usageEstimated) s.usageEstimatedTurns += 1;
  addSpend(s, chargedUsd ?? turnCostUsd(reply.usage, pricing), reply.usage);
  s.promptTokensPerTurn.push(reply.usage.promptTokens);
}

/** A summary of old turns (context strategy "summarize"): paid like a turn, but not one. */
export function recordSummarySpend(s: RunState, usage: Usage, pricing: Pricing): number {
  const cost = turnCostUsd(usage, pricing);
  addSpend(s, cost, usage);
  return cost;
}

/**
 * Empties the dedupe cache: a tool that may change things is about to run, so
 * no read taken before it may answer a call after it (a listing cached before
 * an approved delete would still name the deleted file).
 */
export function forgetResults(s: RunState): void {
  s.cache = {};
}

/**
 * Keeps a tool result for the dedupe cache. The cache crosses continue-as-new
 * with the state, so it is bounded: past `maxChars` of results the oldest go
 * first (object keys keep insertion order: the same on every replay).
 */
export function rememberResult(s: RunState, key: string, content: string, maxChars: number): void {
  delete s.cache[key];
  s.cache[key] = content;
  let total = Object.values(s.cache).reduce((n, v) => n + v.length, 0);
  for (const k of Object.keys(s.cache)) {
    if (total <= maxChars || k === key) break;
    total -= s.cache[k].length;
    delete s.cache[k];
  }
}
