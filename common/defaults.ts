// Every default of the harness in one place, so docs/configuration.md's table can be
// checked against a single file.
import type { DedupePolicy, Pricing, RunDefaults, ToolErrorPolicy, ToolName } from './contract.js';

/** The mini-harness default turn cap of the chapter. */
export const DEFAULT_MAX_TURNS = 15;
export const DEFAULT_MAX_BUDGET_USD = 1.0;
export const DEFAULT_MODEL = 'plan';
export const DEFAULT_TOOL_ERRORS: ToolErrorPolicy = 'describe';
export const DEFAULT_DEDUPE: DedupePolicy = 'readOnly';
/** The tools a run gets when its input names none and its worker's defaults say nothing (a worker's own default: its tools' enabledByDefault). */
export const DEFAULT_TOOLS: ToolName[] = ['list_files', 'read_file', 'delete_file', 'scan_archive'];
export const DEFAULT_WORKSPACE = 'default';
/** The default prices, in USD per million tokens ($2.00 in, $12.00 out): a run without its own pricing is costed at these. */
export const DEFAULT_PRICING: Pricing = { inputPerMTokUsd: 2.0, outputPerMTokUsd: 12.0 };
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/** About 8k tokens: enough to read a log, far from Temporal's 2 MiB payload limit. */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 32_000;
/** Where Temporal itself suggests continue-as-new; its warning level is 10 MiB, its limit 50 MiB. */
export const DEFAULT_CONTINUE_AS_NEW_AT_HISTORY_BYTES = 4 * 1024 * 1024;
/**
 * The transcript travels whole in each model call's input and in the
 * continue-as-new input: one payload each, and Temporal refuses payloads over
 * 2 MiB (the workflow task would fail forever). Counted before compression.
 */
export const MAX_TRANSCRIPT_CHARS = 1.5 * 1024 * 1024;
/** The dedupe cache keeps at most this many characters of results (it travels with the state). */
export const MAX_CACHE_CHARS = 256 * 1024;
/** Hard budget: a model call is made only if the budget pays for a reply of at least this many tokens. */
export const DEFAULT_MIN_REPLY_TOKENS = 256;
/** Hard budget: the most max_tokens a call sends (many models refuse more than they can write). */
export const DEFAULT_MAX_REPLY_TOKENS = 4096;
/** A sub-agent's limits where its spec sets none (SubAgentSpec.limits): each child run's turn cap and most spend. */
export const SUB_AGENT_LIMITS = { maxTurns: 6, maxUsd: 0.05 } as const;
/**
 * How deep sub-agents may nest below a run: a sub-agent's child may itself be
 * offered sub-agent tools (a manager delegating to a researcher), at most this
 * many levels of child runs in all. A worker whose sub-agent tools nest
 * deeper, or call themselves (directly or through another), refuses to start
 * (activities/tools/toolset.ts): every run a chain starts is paid from one
 * budget, and a cycle would only stop when that budget did.
 */
export const MAX_SUB_AGENT_DEPTH = 3;
/**
 * The longest system prompt a sub-agent's spec may carry, in characters: the
 * spec is recorded in the history of every run offered the tool, and the
 * prompt again in each child's input and configuration.
 */
export const MAX_SUB_AGENT_SYSTEM_CHARS = 64_000;
/** The longest model name a sub-agent's spec may carry (real ones are under 100 characters, provider prefixes included). */
export const MAX_MODEL_NAME_CHARS = 200;

/**
 * The defaults a run's input falls back on. A worker may override some
 * (node/config.ts); whatever a run resolved at its start is kept in its
 * history and carried through continue-as-new, so changing a default never
 * changes a run already under way.
 */
export const BUILT_IN_DEFAULTS: RunDefaults = {
  model: DEFAULT_MODEL,
  // No system prompt unless the input or the worker (runDefaults.system, AGENT_DEFAULT_SYSTEM) gives one.
  system: null,
  maxTurns: DEFAULT_MAX_TURNS,
  maxBudgetUsd: DEFAULT_MAX_BUDGET_USD,
  toolErrors: DEFAULT_TOOL_ERRORS,
  dedupe: DEFAULT_DEDUPE,
  tools: DEFAULT_TOOLS,
  workspace: DEFAULT_WORKSPACE,
  pricing: DEFAULT_PRICING,
  approvalTimeoutMs: null,
  modelTimeoutMs: DEFAULT_MODEL_TIMEOUT_MS,
  toolTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
  maxToolResultChars: DEFAULT_MAX_TOOL_RESULT_CHARS,
  continueAsNewAtHistoryBytes: DEFAULT_CONTINUE_AS_NEW_AT_HISTORY_BYTES,
};
