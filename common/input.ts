// Validates the workflow input (./input-schema) and fills in the worker's
// defaults. Pure: no Temporal import, so the workflow wraps the thrown
// InputError in a non-retryable ApplicationFailure and the tests can call it
// directly. The RunConfig it returns is recorded in each run's history: its
// keys, their order and which optional ones appear are part of that record.
import { DEFAULT_MAX_REPLY_TOKENS, DEFAULT_MIN_REPLY_TOKENS } from './defaults.js';
import { InputError } from './input-error.js';
import { parseForkFrom } from './fork-input.js';
import { inputSchema, type CheckedInput } from './input-schema.js';
import { recordedSettings } from './model-settings.js';
import { DEFAULT_MAX_OUTPUT_RETRIES } from './output-schema.js';
import { fieldPath, firstProblem } from './schema-problem.js';
import type { ToolSpec } from './tool-spec.js';
import type { HardBudgetConfig, Pricing, RunConfig, RunDefaults } from './contract.js';

/** The model a run's calls are sent to (LLM_MODEL may override the run's) and its price, null when the worker knows none. */
/** `setting`: where the worker's prices come from, for the refusal (default AGENT_MODEL_PRICES). */
export type PriceOf = (model: string) => { sentModel: string; pricing: Pricing | null; setting?: string };

export { InputError } from './input-error.js';

/**
 * `catalogue`: the tools the worker offers (the run records the specs of those
 * it selects); there is no default, since only a worker knows its tools.
 */
export function parseInput(raw: unknown, d: RunDefaults, catalogue: readonly ToolSpec[], priceOf?: PriceOf): RunConfig {
  const shape = inputShapeProblem(raw);
  if (shape) throw new InputError(shape.field, shape.message);
  const parsed = inputSchema.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = firstProblem(parsed.error);
    throw new InputError(field || 'input', message);
  }
  const input = parsed.data;
  const fork = parseForkFrom(input);
  const limits = input.limits ?? {};
  const maxTurns = limits.maxTurns === undefined ? d.maxTurns : limits.maxTurns;
  const maxBudgetUsd = limits.maxBudgetUsd === undefined ? d.maxBudgetUsd : limits.maxBudgetUsd;
  if (maxTurns === null && maxBudgetUsd === null) {
    throw new InputError('limits', 'must keep at least one of maxTurns and maxBudgetUsd: a run with neither has no exit but the model');
  }
  const model = input.model ?? d.model;
  const hardBudget = hardBudgetOf(input, maxBudgetUsd, model);
  const given = input.pricing ?? {};
  const prices = {
    inputPerMTokUsd: given.inputPerMTokUsd ?? d.pricing.inputPerMTokUsd,
    outputPerMTokUsd: given.outputPerMTokUsd ?? d.pricing.outputPerMTokUsd,
    ...extraRates(given),
  };

  return {
    task: input.task,
    model,
    // Absent: the worker's default (runDefaults.system); null: none, whatever the worker's default.
    system: input.system === undefined ? d.system : input.system,
    maxTurns,
    maxBudgetUsd,
    toolErrors: input.toolErrors ?? d.toolErrors,
    dedupe: input.dedupe ?? d.dedupe,
    // Written only when it asks: a configuration that tells the model stays what it was before the field existed.
    ...(input.unknownOutcomes === 'ask' ? { unknownOutcomes: 'ask' as const } : {}),
    ...toolList(input.tools, d.tools, catalogue),
    workspace: input.workspace ?? d.workspace,
    pricing: pricingFor(given, prices, model, maxBudgetUsd, hardBudget !== null, priceOf),
    approvalTimeoutMs: input.approvalTimeoutMs === undefined ? d.approvalTimeoutMs : input.approvalTimeoutMs,
    // Written only when set: a configuration without it is what it was before the field existed.
    ...escalation(limits.approvalEscalateAfterMs, input.approvalTimeoutMs === undefined ? d.approvalTimeoutMs : input.approvalTimeoutMs),
    modelTimeoutMs: input.modelTimeoutMs ?? d.modelTimeoutMs,
    // Written only when set: a configuration without it waits the built-in default (common/provider-errors.ts).
    ...((input.modelOutageMs ?? d.modelOutageMs) !== undefined ? { modelOutageMs: input.modelOutageMs ?? d.modelOutageMs } : {}),
    ...((input.toolOutageMs ?? d.toolOutageMs) !== undefined ? { toolOutageMs: input.toolOutageMs ?? d.toolOutageMs } : {}),
    toolTimeoutMs: input.toolTimeoutMs ?? d.toolTimeoutMs,
    maxToolResultChars: input.maxToolResultChars ?? d.maxToolResultChars,
    continueAsNewAtHistoryBytes: input.continueAsNewAtHistoryBytes ?? d.continueAsNewAtHistoryBytes,
    // Experiment settings are not the input's: only test/helpers/experiments.ts changes them, on the harness's own workers.
    permanentToolErrors: 'stop',
    experimentalEmptyRejection: false,
    debug: input.debug ?? false,
    context: input.context ? { windowTokens: input.context.windowTokens, strategy: input.context.strategy ?? 'elide', keepRecentTurns: input.context.keepRecentTurns ?? 2 } : null,
    resumeFrom: input.resumeFrom ?? null,
    // The workflow fills in what it learnt loading the source (workflows/start.ts).
    ...(fork ? { forkFrom: { run: fork.run ?? null, workflowId: fork.run ?? null, runId: fork.runId ?? null, atTurn: fork.atTurn, message: fork.message ?? null, inheritedCostUsd: null, fromFile: fork.transcript !== undefined } } : {}),
    // An ops setting, never the input's: a run cannot lift it. Absent when empty, so configurations stay as they were.
    ...(d.requireArgsHash?.length ? { requireArgsHash: [...d.requireArgsHash] } : {}),
    // An ops setting as well: how a failed run shows in Temporal. Absent when off, so configurations stay as they were.
    ...(d.failedRunsFailWorkflow === true ? { failedRunsFailWorkflow: true } : {}),
    // An ops setting too (AGENT_APPROVERS): recorded at start, so the run keeps the policy it began under. Absent: unsigned, as before.
    ...(d.approvers ? { approvers: d.approvers } : {}),
    // Only hard budgets carry the field: a soft run's configuration is what it always was.
    ...(hardBudget ? { hardBudget } : {}),
    ...outputAndSettings(input),
    // The tools' run context: absent when not given, so configurations stay as they were.
    ...(input.runContext !== undefined ? { runContext: input.runContext } : {}),
  };
}

/** outputSchema (with its retries) and modelSettings, written only when given: a configuration without them is what it was. */
function outputAndSettings(input: CheckedInput): Pick<RunConfig, 'outputSchema' | 'maxOutputRetries' | 'modelSettings'> {
  if (input.maxOutputRetries !== undefined && input.outputSchema === undefined) throw new InputError('maxOutputRetries', 'applies only with outputSchema');
  const settings = recordedSettings(input.modelSettings);
  return {
    ...(input.outputSchema !== undefined ? { outputSchema: input.outputSchema as Record<string, unknown>, maxOutputRetries: input.maxOutputRetries ?? DEFAULT_MAX_OUTPUT_RETRIES } : {}),
    ...(settings ? { modelSettings: settings } : {}),
  };
}

/**
 * limits.approvalEscalateAfterMs, when set: it must come before the approval
 * timeout, since a run past approvalTimeoutMs has ended its wait and an
 * escalation then would never be sent (refused rather than ignored).
 */
function escalation(afterMs: number | null | undefined, timeoutMs: number | null): { approvalEscalateAfterMs?: number } {
  if (afterMs === undefined || afterMs === null) return {};
  if (timeoutMs !== null && afterMs >= timeoutMs) {
    throw new InputError('limits.approvalEscalateAfterMs', `must be below approvalTimeoutMs (${timeoutMs}), got ${afterMs}: past the timeout the approval has ended`);
  }
  return { approvalEscalateAfterMs: afterMs };
}

const HARD_ONLY = ['minReplyTokens', 'maxReplyTokens'] as const;
const HARD_ONLY_PROBLEM = 'applies only with limits.budgetMode "hard"';

/** limits.budgetMode and the settings only a hard budget reads; null for a soft budget, which would silently ignore them. */
function hardBudgetOf(input: CheckedInput, maxBudgetUsd: number | null, model: string): HardBudgetConfig | null {
  const limits = input.limits ?? {};
  if ((limits.budgetMode ?? 'soft') === 'soft') {
    for (const key of HARD_ONLY) if (limits[key] !== undefined) throw new InputError(`limits.${key}`, HARD_ONLY_PROBLEM);
    if (input.budgetTimeoutMs !== undefined) throw new InputError('budgetTimeoutMs', HARD_ONLY_PROBLEM);
    return null;
  }
  if (maxBudgetUsd === null) throw new InputError('limits.maxBudgetUsd', 'must be set with limits.budgetMode "hard" (a hard budget needs an amount)');
  if (input.context?.strategy === 'summarize') {
    throw new InputError('context.strategy', `"summarize" is not available with limits.budgetMode "hard" yet (its summary call is not reserved); use "elide" (model ${model})`);
  }
  const minReplyTokens = limits.minReplyTokens ?? DEFAULT_MIN_REPLY_TOKENS;
  const maxReplyTokens = limits.maxReplyTokens ?? Math.max(DEFAULT_MAX_REPLY_TOKENS, minReplyTokens);
  if (maxReplyTokens < minReplyTokens) throw new InputError('limits.maxReplyTokens', `must be at least limits.minReplyTokens (${minReplyTokens}), got ${maxReplyTokens}`);
  return { minReplyTokens, maxReplyTokens, budgetTimeoutMs: input.budgetTimeoutMs ?? null };
}

/**
 * A USD budget is only as good as its prices: the input's own (both given),
 * else the worker's price for the model (its modelPrices entry, or the `"*"`
 * entry that prices every unlisted model). A run with a budget on a model
 * with neither is refused: charging it a default price would make its cap
 * mean nothing. A run without a budget on such a model is costed at the
 * defaults (its costUsd is then an estimate). Without a price list (the
 * CLI's own check) the input's or the defaults stand.
 */
function pricingFor(given: Partial<Pricing>, prices: Pricing, model: string, maxBudgetUsd: number | null, hard: boolean, priceOf: PriceOf | undefined): Pricing {
  if (given.inputPerMTokUsd !== undefined && given.outputPerMTokUsd !== undefined) return prices;
  if (!priceOf) return prices;
  const { sentModel, pricing: known, setting } = priceOf(model);
  if (!known) {
    if (maxBudgetUsd === null) return prices;
    const budget = hard ? 'a hard budget (limits.budgetMode "hard")' : `a USD budget (limits.maxBudgetUsd ${maxBudgetUsd})`;
    // The name as given, cut: a hostile model name must not make the error (and the run's failure) as long as itself.
    const shown = sentModel.length > 200 ? `${JSON.stringify(sentModel.slice(0, 200))}… (${sentModel.length} characters)` : JSON.stringify(sentModel);
    throw new InputError(
      'model',
      `${shown} has no price, and ${budget} needs one: give "pricing" in the input or list the model in the worker's ${setting ?? 'AGENT_MODEL_PRICES'} ` +
        '(a "*" entry prices every model it does not list), or set limits.maxBudgetUsd to null',
    );
  }
  return {
    inputPerMTokUsd: given.inputPerMTokUsd === undefined ? known.inputPerMTokUsd : prices.inputPerMTokUsd,
    outputPerMTokUsd: given.outputPerMTokUsd === undefined ? known.outputPerMTokUsd : prices.outputPerMTokUsd,
    // The input's own cache and reasoning rates, else the worker's for the model.
    ...extraRates(known),
    ...extraRates(given),
  };
}

/** The optional rates (cache read, cache write, reasoning) that are set: absent ones stay absent, so a price list without them records no zeros it did not state. */
function extraRates(p: Partial<Pricing>): Partial<Pricing> {
  return {
    ...(p.cacheReadPerMTokUsd !== undefined ? { cacheReadPerMTokUsd: p.cacheReadPerMTokUsd } : {}),
    ...(p.cacheWritePerMTokUsd !== undefined ? { cacheWritePerMTokUsd: p.cacheWritePerMTokUsd } : {}),
    ...(p.reasoningPerMTokUsd !== undefined ? { reasoningPerMTokUsd: p.reasoningPerMTokUsd } : {}),
    ...(p.promptCount !== undefined ? { promptCount: p.promptCount } : {}),
  };
}

/** The run's tools: names among what the worker offers, and their specs (recorded with the run). */
function toolList(given: readonly unknown[] | undefined, fallback: readonly string[], catalogue: readonly ToolSpec[]): Pick<RunConfig, 'tools' | 'toolSpecs'> {
  const offered = (name: string) => catalogue.find((s) => s.name === name);
  let names: string[];
  if (given === undefined) names = fallback.filter((n) => offered(n) !== undefined);
  else {
    names = [];
    for (const name of given) {
      if (typeof name !== 'string' || offered(name) === undefined) {
        throw new InputError('tools', `names an unknown tool ${JSON.stringify(name)}; this worker offers ${catalogue.map((s) => s.name).join(', ')}`);
      }
      if (!names.includes(name)) names.push(name);
    }
  }
  return { tools: names, toolSpecs: names.map((n) => offered(n) as ToolSpec) };
}

/** How deep a run's input may nest (the input object itself is level 1): real inputs nest 5 levels at most. */
export const MAX_INPUT_DEPTH = 64;

/**
 * What no field of an input may hold, checked before anything else reads it
 * (the workflow runs it before its input travels to the local activity that
 * resolves it). A number JSON cannot carry: `1e400` reads as Infinity, and
 * the next JSON encoding (an activity's input, the CLI's) turns it into
 * `null`, which lifts a limit or waits forever: refused, naming the field.
 * And a value nested past MAX_INPUT_DEPTH, which would overflow the stack of
 * every JSON encoding after it. Iterative: the check itself uses no stack.
 */
export function inputShapeProblem(raw: unknown): { field: string; message: string } | null {
  const todo: { v: unknown; path: PropertyKey[] }[] = [{ v: raw, path: [] }];
  while (todo.length > 0) {
    const { v, path } = todo.pop() as { v: unknown; path: PropertyKey[] };
    if (typeof v === 'number' && !Number.isFinite(v)) {
      const shown = Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
      return { field: fieldPath(path) || 'input', message: `must be a finite number, got ${shown} (a JSON number too large for a double, like 1e400, reads as Infinity)` };
    }
    if (typeof v !== 'object' || v === null) continue;
    if (path.length >= MAX_INPUT_DEPTH) return { field: fieldPath(path) || 'input', message: `is nested more than ${MAX_INPUT_DEPTH} levels deep; the limit is ${MAX_INPUT_DEPTH}` };
    const entries: [PropertyKey, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    // Reversed onto the stack: the first field is looked at first, as a refusal lists them.
    for (let i = entries.length - 1; i >= 0; i--) todo.push({ v: entries[i][1], path: [...path, entries[i][0]] });
  }
  return null;
}
