// Resolves a run's configuration once, when the run starts: the input with
// this worker's defaults filled in. It runs as a local activity, so its answer
// is recorded in history: a replay, a later worker with other defaults, or the
// next execution after continue-as-new all see the configuration the run
// started with, never a re-derived one.
import type { ToolSpec } from '../common/tool-spec.js';
import { InputError, parseInput, type PriceOf } from '../common/input.js';
import type { NotifyPlan, Pricing, RunDefaults } from '../common/contract.js';
import type { ResolvedConfig } from '../common/activity-contract.js';
import { DEFAULT_DEFINITION_CHANGE } from '../common/definition.js';
import type { RunContexts } from './run-contexts.js';
import { priceIn } from './model-prices.js';


/**
 * `catalogue`: the specs of the tools this worker offers; the run records those it selects.
 * `heartbeatTimeoutMs`: the calls' heartbeat timeout this worker's heartbeat interval asks for (the run records it too).
 * `prices`: what this worker knows each model costs (a hard budget refuses a model it has no price for);
 * `sentModel`: LLM_MODEL, which replaces every run's model on the wire, so it is the one priced.
 * `approversSetting`: where the approvers policy came from (AGENT_APPROVERS, or AgentPlugin's option), recorded beside it so the run's refusals name it.
 */
export function createResolveConfig(
  defaults: RunDefaults,
  catalogue: readonly ToolSpec[],
  heartbeatTimeoutMs: number,
  prices: Readonly<Record<string, Pricing>> = {},
  sentModel?: string,
  pricesSetting?: string,
  payloadsEncrypted = false,
  approversSetting?: string,
  /** The worker's notification routes' filters (AgentPlugin `notify`): recorded, so the run knows at once whether and for what it notifies. */
  notify?: NotifyPlan,
  runContexts?: RunContexts,
) {
  const priceOf: PriceOf = (model) => {
    const name = sentModel ?? model;
    return { sentModel: name, pricing: priceIn(prices, name), ...(pricesSetting !== undefined ? { setting: pricesSetting } : {}) };
  };
  return async function resolveConfig(input: unknown): Promise<ResolvedConfig> {
    try {
      // The worker's definition-change policy is recorded with the configuration, so a replay decides as the run did.
      // So is whether this worker encrypts payloads: what is not encrypted then carries no tool or model text (workflows/visibility.ts).
      const parsed = parseInput(input, defaults, catalogue, priceOf);
      const source = parsed.approvers && approversSetting ? { approversSource: approversSetting } : {};
      // Filed for this worker's tool calls of the run (./run-contexts.ts): they carry its key, not the object.
      if (parsed.runContext !== undefined) runContexts?.remember(parsed.runContext);
      const cfg = { ...parsed, heartbeatTimeoutMs, definitionChange: defaults.definitionChange ?? DEFAULT_DEFINITION_CHANGE, ...source, ...(notify ? { notify } : {}) };
      return { ok: true, cfg: payloadsEncrypted ? { ...cfg, payloadsEncrypted: true } : cfg };
    } catch (err) {
      // Bad input is an answer, not an activity failure: the workflow fails the run with it at once.
      if (err instanceof InputError) return { ok: false, field: err.field, message: err.message };
      throw err;
    }
  };
}
