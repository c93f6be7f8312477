// The decisions of the agent loop, with no Temporal import: what is pending,
// which exit applies, what a reply costs, what the cache holds, what the
// transcript says about a failed or declined call. workflows/agent-run.ts wires
// these to activities and signals; test/loop.test.ts checks them in microseconds.
import { MAX_TRANSCRIPT_CHARS, RESEARCH_LIMITS } from './defaults';
import type { StoreKnowledge } from './message-refs';
import { argumentProblem } from '../common/tool-args';
import { canonicalJson } from '../common/args-hash';
import { LEGACY_TOOL_SPECS } from './legacy-tool-specs';
import type { ToolSpec } from '../common/tool-spec';
import { addUsd } from '../common/budget-math';
import type {
  BudgetRaise,
  OverReservationFlag,
  ChildSpend,
  ChatMessage,
  DedupePolicy,
  Interruption,
  ModelReply,
  Pricing,
  RunConfig,
  RunResult,
  ToolCall,
  ToolErrorPolicy,
  ToolName,
  Usage,
} from '../common/contract';

/** Everything the loop knows. Plain JSON so it can cross continue-as-new. (StoreKnowledge: what the message store holds.) */
export interface LoopState extends StoreKnowledge {
  messages: ChatMessage[];
  turns: number;
  toolRuns: number;
  costUsd: number;
  usage: Usage;
  promptTokensPerTurn: number[];
  /** Dedupe cache: cacheKey(tool, args) -> the tool result text. */
  cache: Record<string, string>;
  /** Sub-agent spend, also counted in costUsd and usage. Optional: states carried before it existed lack it. */
  children?: ChildSpend;
  /** How many messages the last model request carried (its measured size is the last promptTokensPerTurn). */
  messagesAtLastCall?: number;
  /**
   * Tool calls the model has proposed in this run, counted by the workflow:
   * each call's occurrence number names its decision and its effects, so a
   * provider that sends an id again (many reuse `call_0` every turn) never
   * meets an earlier call's decision or ledger record. Absent in states
   * carried from before the count: their keys stay as they were.
   */
  callsProposed?: number;
  /** The occurrence number of the last reply's first call (its others follow in order). */
  lastReplyFirstCall?: number;
  /** Turns whose reply carried no usage: priced from the harness's own token count. */
  usageEstimatedTurns?: number;
  /** Hard budget: the raises people made (the budget itself is cfg.maxBudgetUsd, raised in place). */
  budgetRaises?: BudgetRaise[];
  /** Hard budget: the reply whose usage passed its hold (the run stopped on it). */
  usageOverReservation?: OverReservationFlag;
}

export const noChildren = (): ChildSpend => ({ runs: 0, costUsd: 0, usage: { promptTokens: 0, completionTokens: 0 } });

/** Adds a finished child run's spend to the parent: its budget pays for its children. */
export function recordChildSpend(s: LoopState, costUsd: number, usage: Usage): void {
  const c = s.children ?? noChildren();
  s.children = {
    runs: c.runs + 1,
    costUsd: addUsd(c.costUsd, costUsd),
    usage: { promptTokens: c.usage.promptTokens + usage.promptTokens, completionTokens: c.usage.completionTokens + usage.completionTokens },
  };
  addSpend(s, costUsd, usage);
}

/** Adds spend to the run's totals: its turns, its summaries and its children all pay from them. */
function addSpend(s: LoopState, costUsd: number, usage: Usage): void {
  s.costUsd = addUsd(s.costUsd, costUsd);
  s.usage.promptTokens += usage.promptTokens;
  s.usage.completionTokens += usage.completionTokens;
}

export function initialState(cfg: RunConfig): LoopState {
  const messages: ChatMessage[] = [];
  if (cfg.system !== null) messages.push({ role: 'system', content: cfg.system });
  messages.push({ role: 'user', content: cfg.task });
  return {
    messages,
    turns: 0,
    toolRuns: 0,
    costUsd: 0,
    usage: { promptTokens: 0, completionTokens: 0 },
    promptTokensPerTurn: [],
    cache: {},
    children: noChildren(),
    callsProposed: 0,
    lastReplyFirstCall: 0,
  };
}

/** The loop's state to continue a stopped run from: its transcript and totals. */
export function stateOf(prior: { result: RunResult; messages: ChatMessage[] }): LoopState {
  const r = prior.result;
  // A new workflow id names the resumed run's keys: counting from the calls its transcript holds is enough.
  const calls = prior.messages.map((m) => (m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0));
  const lastCalls = [...calls].reverse().find((n) => n > 0) ?? 0;
  const callsProposed = calls.reduce((a, b) => a + b, 0);
  return {
    callsProposed,
    lastReplyFirstCall: callsProposed - lastCalls + 1,
    messages: prior.messages,
    turns: r.turns,
    toolRuns: r.toolRuns,
    costUsd: r.costUsd,
    usage: { ...r.usage },
    promptTokensPerTurn: [...r.promptTokensPerTurn],
    usageEstimatedTurns: r.usageEstimatedTurns ?? 0,
    cache: {},
    children: r.children ?? noChildren(),
  };
}

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

// --- stop conditions, checked at the top of every iteration before the model is asked

export const isTurnCapReached = (s: LoopState, cfg: RunConfig): boolean => cfg.maxTurns !== null && s.turns >= cfg.maxTurns;
/** A soft budget's check. A hard budget never stops here: it parks before a call it cannot pay (workflows/budget.ts). */
export const isBudgetSpent = (s: LoopState, cfg: RunConfig): boolean =>
  cfg.hardBudget === undefined && cfg.maxBudgetUsd !== null && s.costUsd >= cfg.maxBudgetUsd;

/** What the budget still allows, in USD (may be negative after the last turn); null without a budget. */
export function budgetLeft(s: LoopState, cfg: RunConfig): number | null {
  return cfg.maxBudgetUsd === null ? null : cfg.maxBudgetUsd - s.costUsd;
}

/** A sub-agent's budget: its own cap, never more than its parent has left. */
export function childBudget(left: number | null): number {
  return left === null ? RESEARCH_LIMITS.maxBudgetUsd : Math.min(RESEARCH_LIMITS.maxBudgetUsd, left);
}

/** A sub-agent child's workflow id (`…/m1/r1/research`): readable, and stable across replays. */
export function subAgentChildId(runId: string, pending: PendingCall, toolName: string): string {
  return `${runId}/m${pending.messageIndex}/${pending.call.id}/${toolName}`;
}

/**
 * How a run ends, one shape per status: a completed run has an answer and no
 * interruption, a failed one an error and its type, a stopped one says what
 * stopped it. `reason` is one line for people (the trace's run_stopped, the CLI).
 */
export type Exit =
  | { status: 'completed'; interruption: null; reason: string; output: string }
  /** errorType, for alerting: ProviderUnauthorized, PermanentToolError, ProtocolError, … */
  | { status: 'failed'; interruption: null; reason: string; error: string; errorType: string }
  | { status: 'max_turns_exceeded'; interruption: { type: 'max_turns' }; reason: string }
  | { status: 'budget_exceeded'; interruption: { type: 'max_budget' }; reason: string }
  | { status: 'interrupted'; interruption: Extract<Interruption, { type: 'approval' | 'cancelled' }>; reason: string };

/** The result fields an exit fills: an answer for `completed`, an error and its type for `failed`, nulls otherwise. */
export function exitFields(exit: Exit): { output: string | null; error: string | null; errorType: string | null } {
  if (exit.status === 'completed') return { output: exit.output, error: null, errorType: null };
  if (exit.status === 'failed') return { output: null, error: exit.error, errorType: exit.errorType };
  return { output: null, error: null, errorType: null };
}

export function limitExit(s: LoopState, cfg: RunConfig): Exit | null {
  if (isTurnCapReached(s, cfg)) {
    return { status: 'max_turns_exceeded', interruption: { type: 'max_turns' }, reason: `turn cap of ${cfg.maxTurns} reached` };
  }
  if (isBudgetSpent(s, cfg)) {
    return {
      status: 'budget_exceeded',
      interruption: { type: 'max_budget' },
      reason: `budget of $${cfg.maxBudgetUsd} spent ($${s.costUsd.toFixed(6)}; the check runs before each turn, so spend overshoots by at most one turn)`,
    };
  }
  return null;
}

/** What the loop does next, decided from its state alone. */
export type Step = { kind: 'drain'; pending: PendingCall } | { kind: 'stop'; exit: Exit } | { kind: 'ask' };

/**
 * The top of every iteration: drain what the last reply asked for first
 * (resume and approval share this path); only when nothing is pending, check
 * the turn cap and the budget *before* asking the model again.
 */
export function nextStep(s: LoopState, cfg: RunConfig): Step {
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
export function takeReply(s: LoopState, reply: ModelReply, pricing: Pricing, chargedUsd?: number): Exit | null {
  recordSpend(s, reply, pricing, chargedUsd);
  const problem = replyProtocolProblem(s.messages, reply);
  if (problem) return { status: 'failed', interruption: null, reason: `protocol error: ${problem}`, error: `protocol error: ${problem}`, errorType: 'ProtocolError' };
  s.messages.push(reply.message);
  const calls = reply.message.tool_calls?.length ?? 0;
  if (calls > 0 && s.callsProposed !== undefined) {
    s.lastReplyFirstCall = s.callsProposed + 1;
    s.callsProposed += calls;
  }
  if (calls > 0) return null;
  const output = reply.message.content ?? '';
  const cut = reply.finishReason === 'length' ? ' (cut at its reply length cap)' : '';
  const reason = output.trim() ? `the model answered${cut}` : `the model answered with an empty reply (no text, no tool calls)${cut}`;
  return { status: 'completed', interruption: null, reason, output };
}

/** A transcript this large could not travel in one payload: stop with the reason rather than get stuck. */
export function transcriptTooBig(s: LoopState): Exit | null {
  const chars = JSON.stringify(s.messages).length;
  if (chars <= MAX_TRANSCRIPT_CHARS) return null;
  const msg =
    `the transcript is ${chars} characters, over the ${MAX_TRANSCRIPT_CHARS} the harness allows: the next model call's ` +
    "input would approach Temporal's 2 MiB payload limit. Start a new run with a summary of this one.";
  return { status: 'failed', interruption: null, reason: msg, error: msg, errorType: 'TranscriptTooLarge' };
}

// --- money

/**
 * A running total in dollars, kept to a picodollar: float addition otherwise
 * shows its noise to people (0.0017000000000000001) in results and traces.
 */
export { addUsd };

export function turnCostUsd(usage: Usage, pricing: Pricing): number {
  return (usage.promptTokens * pricing.inputPerMTokUsd + usage.completionTokens * pricing.outputPerMTokUsd) / 1e6;
}

/**
 * Counts a reply the moment it arrives: the turn, its tokens, its cost. The
 * message is appended separately, after it has been checked. `chargedUsd`: a
 * hard budget charges at most the call's hold (common/budget-math settleReply).
 */
export function recordSpend(s: LoopState, reply: ModelReply, pricing: Pricing, chargedUsd?: number): void {
  s.turns += 1;
  if (reply.usageEstimated) s.usageEstimatedTurns = (s.usageEstimatedTurns ?? 0) + 1;
  addSpend(s, chargedUsd ?? turnCostUsd(reply.usage, pricing), reply.usage);
  s.promptTokensPerTurn.push(reply.usage.promptTokens);
}

/** A summary of old turns (context strategy "summarize"): paid like a turn, but not one. */
export function recordSummarySpend(s: LoopState, usage: Usage, pricing: Pricing): number {
  const cost = turnCostUsd(usage, pricing);
  addSpend(s, cost, usage);
  return cost;
}

/**
 * A reply the transcript cannot hold without breaking the protocol's two rules:
 * a call without an id (its result could not be linked to it) or an id used
 * twice in one reply (one of the calls would be left without its result). An
 * id an earlier turn used is fine: results follow their reply, and the
 * harness names calls by occurrence, not by id.
 */
export function replyProtocolProblem(_messages: readonly ChatMessage[], reply: ModelReply): string | null {
  const calls = reply.message.tool_calls ?? [];
  const seen = new Set<string>();
  for (const c of calls) {
    if (typeof c.id !== 'string' || c.id === '') return 'the model returned a tool call without an id: its result could not be linked to it';
    if (seen.has(c.id)) return `the model reused tool call id ${JSON.stringify(c.id)} within one reply: one of its calls would be left without a result`;
    if (!c.function || typeof c.function.name !== 'string') return `tool call ${c.id} has no function name`;
    seen.add(c.id);
  }
  return null;
}

// --- tool calls

export const MAX_ARGUMENT_CHARS = 16_384;

/**
 * Cuts a tool result to `max` characters with a note the model can read. Every
 * result lands in history (and in every later model call's input), and one
 * payload over 2 MiB would leave the workflow task failing forever.
 */
export function capToolResult(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[truncated by the harness: the result was ${text.length} characters; only the first ${max} are shown]`;
}

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

/**
 * Keeps a tool result for the dedupe gate. The cache crosses continue-as-new
 * with the state, so it is bounded: past `maxChars` of results the oldest go
 * first (object keys keep insertion order: the same on every replay). null:
 * unbounded, as histories recorded before the bound replay.
 */
export function rememberResult(s: LoopState, key: string, content: string, maxChars: number | null): void {
  delete s.cache[key];
  s.cache[key] = content;
  if (maxChars === null) return;
  let total = Object.values(s.cache).reduce((n, v) => n + v.length, 0);
  for (const k of Object.keys(s.cache)) {
    if (total <= maxChars || k === key) break;
    total -= s.cache[k].length;
    delete s.cache[k];
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
export function idempotencyKey(workflowId: string, chainId: string, pending: PendingCall, s: LoopState): string {
  const occurrence = callOccurrence(s, pending);
  if (occurrence === null) return `${workflowId}@${chainId}/m${pending.messageIndex}/${pending.call.id}`;
  return `${workflowId}@${chainId}/call${occurrence}`;
}

/** The pending call's occurrence number in the run (1, 2, …); null for states carried from before the count. */
export function callOccurrence(s: LoopState, pending: PendingCall): number | null {
  if (s.callsProposed === undefined || s.lastReplyFirstCall === undefined) return null;
  const m = s.messages[pending.messageIndex];
  const index = m.role === 'assistant' ? (m.tool_calls ?? []).indexOf(pending.call) : -1;
  return s.lastReplyFirstCall + Math.max(0, index);
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

/** A run's tool specs: recorded at its start, or (configurations from before tool modules) the frozen catalogue's. */
export function toolSpecsOf(cfg: Pick<RunConfig, 'tools' | 'toolSpecs'>): ToolSpec[] {
  if (cfg.toolSpecs) return cfg.toolSpecs;
  return cfg.tools.map((n) => LEGACY_TOOL_SPECS.find((s) => s.name === n)).filter((s): s is ToolSpec => s !== undefined);
}
