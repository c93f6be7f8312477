// Validates the workflow input and fills in defaults. Pure: no Temporal
// import, so the workflow wraps the thrown InputError in a non-retryable
// ApplicationFailure and the tests can call it directly.
import { BUILT_IN_DEFAULTS } from './defaults';
import { InputError } from './input-error';
import { parseForkFrom } from './fork-input';
import type { ToolSpec } from './tool-spec';
import { LEGACY_TOOL_SPECS } from './legacy-tool-specs';
import type { ContextPolicy } from './contract';
import type { DedupePolicy, HardBudgetConfig, Pricing, RunConfig, RunDefaults, ToolErrorPolicy, UnknownOutcomePolicy } from './contract';
import { DEFAULT_MAX_REPLY_TOKENS, DEFAULT_MIN_REPLY_TOKENS } from './defaults';

/** The model a run's calls are sent to (LLM_MODEL may override the run's) and its price, null when the worker knows none. */
export type PriceOf = (model: string) => { sentModel: string; pricing: Pricing | null };

export { InputError } from './input-error';

const TOOL_ERROR_POLICIES: readonly ToolErrorPolicy[] = ['describe', 'generic', 'fatal'];
const DEDUPE_POLICIES: readonly DedupePolicy[] = ['readOnly', 'off', 'all'];
const UNKNOWN_OUTCOME_POLICIES: readonly UnknownOutcomePolicy[] = ['tell_model', 'ask'];
const KNOWN_FIELDS = new Set([
  'task', 'model', 'system', 'limits', 'toolErrors', 'dedupe', 'tools', 'workspace', 'pricing',
  'approvalTimeoutMs', 'budgetTimeoutMs', 'modelTimeoutMs', 'toolTimeoutMs', 'maxToolResultChars',
  'continueAsNewAtHistoryBytes', 'permanentToolErrors', 'experimentalEmptyRejection', 'debug', 'context', 'resumeFrom', 'forkFrom',
  'unknownOutcomes',
]);
const MAX_TASK_CHARS = 100_000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `catalogue`: the tools the worker offers (the run records the specs of those
 * it selects). The default is the frozen catalogue of runs recorded before
 * tool modules, for the replay of their histories.
 */
export function parseInput(raw: unknown, d: RunDefaults = BUILT_IN_DEFAULTS, catalogue: readonly ToolSpec[] = LEGACY_TOOL_SPECS, priceOf?: PriceOf): RunConfig {
  if (!isObj(raw)) throw new InputError('input', 'must be a JSON object like {"task": "..."}');
  for (const key of Object.keys(raw)) {
    if (!KNOWN_FIELDS.has(key)) throw new InputError(key, `is not a known field (known: ${[...KNOWN_FIELDS].join(', ')})`);
  }
  const fork = parseForkFrom(raw);
  const task = raw.task;
  if (typeof task !== 'string' || task.trim() === '') throw new InputError('task', 'is required and must be a non-empty string');
  if (task.length > MAX_TASK_CHARS) throw new InputError('task', `must be at most ${MAX_TASK_CHARS} characters`);

  const limits = raw.limits === undefined ? {} : raw.limits;
  if (!isObj(limits)) throw new InputError('limits', 'must be an object like {"maxTurns": 20, "maxBudgetUsd": 0.05}');
  knownKeys(limits, 'limits', LIMIT_FIELDS);
  const maxTurns = optionalLimit(limits, 'maxTurns', d.maxTurns, true);
  const maxBudgetUsd = optionalLimit(limits, 'maxBudgetUsd', d.maxBudgetUsd, false);
  if (maxTurns === null && maxBudgetUsd === null) {
    throw new InputError('limits', 'must keep at least one of maxTurns and maxBudgetUsd: a run with neither has no exit but the model');
  }

  const pricing = raw.pricing === undefined ? {} : raw.pricing;
  if (!isObj(pricing)) throw new InputError('pricing', 'must be an object like {"inputPerMTokUsd": 2, "outputPerMTokUsd": 12}');
  knownKeys(pricing, 'pricing', PRICING_FIELDS);
  const model = optionalString(raw, 'model', d.model);
  const hardBudget = hardBudgetOf(raw, limits, maxBudgetUsd, model);
  const prices = {
    inputPerMTokUsd: nonNegative(pricing.inputPerMTokUsd, 'pricing.inputPerMTokUsd', d.pricing.inputPerMTokUsd),
    outputPerMTokUsd: nonNegative(pricing.outputPerMTokUsd, 'pricing.outputPerMTokUsd', d.pricing.outputPerMTokUsd),
  };

  return {
    task,
    model,
    system: raw.system === undefined || raw.system === null ? null : requireString(raw.system, 'system'),
    maxTurns,
    maxBudgetUsd,
    toolErrors: oneOf(raw.toolErrors, 'toolErrors', TOOL_ERROR_POLICIES, d.toolErrors),
    dedupe: oneOf(raw.dedupe, 'dedupe', DEDUPE_POLICIES, d.dedupe),
    // Written only when it asks: a configuration that tells the model stays what it was before the field existed.
    ...(oneOf(raw.unknownOutcomes, 'unknownOutcomes', UNKNOWN_OUTCOME_POLICIES, 'tell_model') === 'ask' ? { unknownOutcomes: 'ask' as const } : {}),
    ...toolList(raw.tools, d.tools, catalogue),
    workspace: workspaceName(raw.workspace, d.workspace),
    pricing: hardBudget ? hardPricing(pricing, prices, model, priceOf) : prices,
    approvalTimeoutMs:
      raw.approvalTimeoutMs === undefined
        ? d.approvalTimeoutMs
        : raw.approvalTimeoutMs === null
          ? null
          : positive(raw.approvalTimeoutMs, 'approvalTimeoutMs'),
    modelTimeoutMs: raw.modelTimeoutMs === undefined ? d.modelTimeoutMs : positive(raw.modelTimeoutMs, 'modelTimeoutMs'),
    toolTimeoutMs: raw.toolTimeoutMs === undefined ? d.toolTimeoutMs : positive(raw.toolTimeoutMs, 'toolTimeoutMs'),
    maxToolResultChars: raw.maxToolResultChars === undefined ? d.maxToolResultChars : positiveInt(raw.maxToolResultChars, 'maxToolResultChars', MAX_TOOL_RESULT_CHARS_LIMIT),
    continueAsNewAtHistoryBytes:
      raw.continueAsNewAtHistoryBytes === undefined
        ? d.continueAsNewAtHistoryBytes
        : positiveInt(raw.continueAsNewAtHistoryBytes, 'continueAsNewAtHistoryBytes', 40 * 1024 * 1024),
    permanentToolErrors: oneOf(raw.permanentToolErrors, 'permanentToolErrors', ['stop', 'retry'] as const, 'stop'),
    experimentalEmptyRejection: optionalBoolean(raw.experimentalEmptyRejection, 'experimentalEmptyRejection'),
    debug: optionalBoolean(raw.debug, 'debug'),
    context: contextPolicy(raw.context),
    resumeFrom: raw.resumeFrom === undefined || raw.resumeFrom === null ? null : requireString(raw.resumeFrom, 'resumeFrom'),
    // The workflow fills in what it learnt loading the source (workflows/fork-setup.ts).
    ...(fork ? { forkFrom: { run: fork.run ?? null, runId: fork.runId ?? null, atTurn: fork.atTurn, message: fork.message ?? null, inheritedCostUsd: null, fromFile: fork.transcript !== undefined } } : {}),
    // An ops setting, never the input's: a run cannot lift it. Absent when empty, so configurations stay as they were.
    ...(d.requireArgsHash?.length ? { requireArgsHash: [...d.requireArgsHash] } : {}),
    // Only hard budgets carry the field: a soft run's configuration is what it always was.
    ...(hardBudget ? { hardBudget } : {}),
  };
}

const LIMIT_FIELDS = ['maxTurns', 'maxBudgetUsd', 'budgetMode', 'minReplyTokens', 'maxReplyTokens'];
const HARD_ONLY = ['minReplyTokens', 'maxReplyTokens'];

/** limits.budgetMode and the settings only a hard budget reads; null for a soft budget. */
function hardBudgetOf(raw: Obj, limits: Obj, maxBudgetUsd: number | null, model: string): HardBudgetConfig | null {
  const mode = oneOf(limits.budgetMode, 'limits.budgetMode', ['soft', 'hard'] as const, 'soft');
  if (mode === 'soft') {
    for (const key of HARD_ONLY) if (limits[key] !== undefined) throw new InputError(`limits.${key}`, 'applies only with limits.budgetMode "hard"');
    if (raw.budgetTimeoutMs !== undefined) throw new InputError('budgetTimeoutMs', 'applies only with limits.budgetMode "hard"');
    return null;
  }
  if (maxBudgetUsd === null) throw new InputError('limits.maxBudgetUsd', 'must be set with limits.budgetMode "hard" (a hard budget needs an amount)');
  if (raw.context !== undefined && raw.context !== null && (raw.context as Obj).strategy === 'summarize') {
    throw new InputError('context.strategy', `"summarize" is not available with limits.budgetMode "hard" yet (its summary call is not reserved); use "elide" (model ${model})`);
  }
  const minReplyTokens = limits.minReplyTokens === undefined ? DEFAULT_MIN_REPLY_TOKENS : positiveInt(limits.minReplyTokens, 'limits.minReplyTokens', 1_000_000);
  const maxReplyTokens = limits.maxReplyTokens === undefined ? Math.max(DEFAULT_MAX_REPLY_TOKENS, minReplyTokens) : positiveInt(limits.maxReplyTokens, 'limits.maxReplyTokens', 1_000_000);
  if (maxReplyTokens < minReplyTokens) throw new InputError('limits.maxReplyTokens', `must be at least limits.minReplyTokens (${minReplyTokens}), got ${maxReplyTokens}`);
  const budgetTimeoutMs = raw.budgetTimeoutMs === undefined || raw.budgetTimeoutMs === null ? null : positive(raw.budgetTimeoutMs, 'budgetTimeoutMs');
  return { minReplyTokens, maxReplyTokens, budgetTimeoutMs };
}

/**
 * A hard budget is only as good as its prices: the input's own (both given),
 * else the worker's price for the model; a model with neither is refused.
 * Without a price list (the CLI's own check) the input's or the defaults stand.
 */
function hardPricing(given: Obj, prices: Pricing, model: string, priceOf: PriceOf | undefined): Pricing {
  if (given.inputPerMTokUsd !== undefined && given.outputPerMTokUsd !== undefined) return prices;
  if (!priceOf) return prices;
  const { sentModel, pricing: known } = priceOf(model);
  if (!known) {
    throw new InputError('model', `${JSON.stringify(sentModel)} has no price, and a hard budget (limits.budgetMode "hard") needs one: give "pricing" in the input or list the model in the worker's AGENT_MODEL_PRICES`);
  }
  return {
    inputPerMTokUsd: given.inputPerMTokUsd === undefined ? known.inputPerMTokUsd : prices.inputPerMTokUsd,
    outputPerMTokUsd: given.outputPerMTokUsd === undefined ? known.outputPerMTokUsd : prices.outputPerMTokUsd,
  };
}
const PRICING_FIELDS = ['inputPerMTokUsd', 'outputPerMTokUsd'];

/** A key the harness does not know is a typo that would silently leave a default in force ({"maxBudgetUSD": 0.01} runs on $1). */
function knownKeys(v: Obj, at: string, known: readonly string[]): void {
  for (const key of Object.keys(v)) {
    if (!known.includes(key)) throw new InputError(`${at}.${key}`, `is not a known field (known: ${known.join(', ')})`);
  }
}

function contextPolicy(v: unknown): ContextPolicy | null {
  if (v === undefined || v === null) return null;
  if (!isObj(v)) throw new InputError('context', 'must be an object like {"windowTokens": 8000, "strategy": "elide"}');
  for (const key of Object.keys(v)) {
    if (!['windowTokens', 'strategy', 'keepRecentTurns'].includes(key)) throw new InputError(`context.${key}`, 'is not a known field (known: windowTokens, strategy, keepRecentTurns)');
  }
  const windowTokens = positiveInt(v.windowTokens, 'context.windowTokens', 10_000_000);
  if (windowTokens < 1000) throw new InputError('context.windowTokens', `must be at least 1000, got ${windowTokens}`);
  const strategy = oneOf(v.strategy, 'context.strategy', ['elide', 'summarize'] as const, 'elide');
  const keep = v.keepRecentTurns === undefined ? 2 : v.keepRecentTurns;
  if (typeof keep !== 'number' || !Number.isInteger(keep) || keep < 0 || keep > 1000) {
    throw new InputError('context.keepRecentTurns', `must be an integer between 0 and 1000, got ${JSON.stringify(keep)}`);
  }
  return { windowTokens, strategy, keepRecentTurns: keep };
}

function optionalLimit(limits: Obj, key: string, fallback: number | null, integer: boolean): number | null {
  const v = limits[key];
  if (v === undefined) return fallback;
  if (v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v))) {
    throw new InputError(`limits.${key}`, `must be a positive ${integer ? 'integer' : 'number'} or null, got ${JSON.stringify(v)}`);
  }
  return v;
}

function requireString(v: unknown, field: string): string {
  if (typeof v !== 'string') throw new InputError(field, `must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function optionalString(raw: Obj, field: string, fallback: string): string {
  if (raw[field] === undefined) return fallback;
  const v = requireString(raw[field], field);
  if (v.trim() === '') throw new InputError(field, 'must not be empty');
  return v;
}

function oneOf<T extends string>(v: unknown, field: string, allowed: readonly T[], fallback: T): T {
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw new InputError(field, `must be one of ${allowed.join(' | ')}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

/** The run's tools: names among what the worker offers, and their specs (recorded with the run). */
function toolList(v: unknown, fallback: readonly string[], catalogue: readonly ToolSpec[]): Pick<RunConfig, 'tools' | 'toolSpecs'> {
  const offered = (name: string) => catalogue.find((s) => s.name === name);
  let names: string[];
  if (v === undefined) names = fallback.filter((n) => offered(n) !== undefined);
  else {
    if (!Array.isArray(v)) throw new InputError('tools', 'must be an array of tool names');
    names = [];
    for (const name of v) {
      if (typeof name !== 'string' || offered(name) === undefined) {
        throw new InputError('tools', `names an unknown tool ${JSON.stringify(name)}; this worker offers ${catalogue.map((s) => s.name).join(', ')}`);
      }
      if (!names.includes(name)) names.push(name);
    }
  }
  return { tools: names, toolSpecs: names.map((n) => offered(n) as ToolSpec) };
}

// One path segment of letters, digits, dot, dash and underscore, not starting
// with a dot: it names a folder under the worker's workspace root and must not
// reach the harness's own bookkeeping beside it.
const WORKSPACE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;

function workspaceName(v: unknown, fallback: string): string {
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !WORKSPACE_NAME.test(v)) {
    throw new InputError('workspace', `must be one folder name of letters, digits, ".", "_" or "-" (not starting with "."), got ${JSON.stringify(v)}`);
  }
  return v;
}

function optionalBoolean(v: unknown, field: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new InputError(field, `must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function nonNegative(v: unknown, field: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new InputError(field, `must be a number >= 0, got ${JSON.stringify(v)}`);
  return v;
}

// A result this size is already a fifth of Temporal's 2 MiB payload limit.
const MAX_TOOL_RESULT_CHARS_LIMIT = 400_000;

function positiveInt(v: unknown, field: string, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0 || v > max) {
    throw new InputError(field, `must be an integer between 1 and ${max}, got ${JSON.stringify(v)}`);
  }
  return v;
}

function positive(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new InputError(field, `must be a number > 0, got ${JSON.stringify(v)}`);
  return v;
}
