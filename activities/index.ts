// The activities of one worker, built from its configuration. Workflows import
// only the *type* of this object (see workflows/agent-run.ts).
import { BUILT_IN_DEFAULTS } from '../common/defaults.js';
import type { AgentActivities } from '../common/activity-contract.js';
import type { NotifyPlan, NotifySetting, Pricing, RunDefaults } from '../common/contract.js';
import { createNotifyParked } from './notify.js';
import { createCallModel, type ModelDeps } from './model.js';
import { modelPrices } from './model-prices.js';
import { loadRun } from './load-run.js';
import { loadForkSource } from './load-fork-source.js';
import { createResolveConfig } from './resolve-config.js';
import { BUILTIN_TOOLS } from './tools/builtin.js';
import { createRunTool, createToolExecution, type ToolDeps } from './tools/run-tool.js';
import { createReadAhead } from './read-ahead.js';
import { Toolset } from './tools/toolset.js';
import { RunningCalls } from './running-calls.js';
import { heartbeatTimeoutFor } from '../node/heartbeat.js';
import { RunContexts } from './run-contexts.js';

export type ActivityDeps = ModelDeps &
  ToolDeps & {
    defaults?: Partial<RunDefaults>;
    /** Default: the built-ins. */
    toolset?: Toolset;
    /** Prices of models beyond the scripted provider's (AGENT_MODEL_PRICES): what a hard budget may run on. */
    prices?: Readonly<Record<string, Pricing>>;
    /** What a refusal of defaults.requireArgsHash calls the setting (default: its environment variable). */
    requireArgsHashSetting?: string;
    /** What a refusal for a model without a price calls `prices`' setting: the plugin option or the variable it came from (default AGENT_MODEL_PRICES). */
    pricesSetting?: string;
    /** Whether this worker encrypts payloads: recorded in each run's configuration (RunConfig.payloadsEncrypted). */
    payloadsEncrypted?: boolean;
    /** What the runs' refusals call defaults.approvers (recorded with the policy; default: its environment variable). */
    approversSetting?: string;
    /** Where runs parked on a person are announced (AgentPlugin `notify`, AGENT_NOTIFY_URL); null or absent: nowhere, and runs schedule no notification. */
    notify?: NotifySetting | null;
  };

/** Checked against the contract the workflow calls (common/activity-contract.ts). */
export function createActivities(deps: ActivityDeps): AgentActivities {
  // One registry for model and tool calls: a Stop aborts whichever is running.
  const calls = deps.calls ?? new RunningCalls();
  // One cache for the runs this worker resolves and the tools it runs: a tool on the run's own worker never asks the run.
  const runContexts = deps.runContexts ?? new RunContexts();
  const toolset = deps.toolset ?? new Toolset(BUILTIN_TOOLS);
  const catalogue = toolset.specs();
  const toolDeps = { ...deps, toolset, calls, runContexts };
  // Runs that name no tools get the ones their tools offer by default.
  const defaultTools = catalogue.filter((s) => s.enabledByDefault !== false).map((s) => s.name);
  const unknown = (deps.defaults?.requireArgsHash ?? []).filter((n) => !catalogue.some((s) => s.name === n));
  if (unknown.length) {
    throw new Error(`${deps.requireArgsHashSetting ?? 'AGENT_REQUIRE_ARGS_HASH'} names ${unknown.map((n) => JSON.stringify(n)).join(', ')}, which this worker does not offer (it offers ${catalogue.map((s) => s.name).join(', ')})`);
  }
  return {
    resolveConfig: createResolveConfig({ ...BUILT_IN_DEFAULTS, tools: defaultTools, ...deps.defaults }, catalogue, heartbeatTimeoutFor(deps.heartbeatEveryMs), modelPrices(deps.prices, deps.defaults?.pricing), deps.model, deps.pricesSetting, deps.payloadsEncrypted === true, deps.approversSetting, notifyPlan(deps.notify ?? null), runContexts),
    // The one model activity, whatever the run's budget mode: a hard budget's input carries its allowance.
    // The reply's leading read-only calls run inside the model call (./read-ahead.ts), as the tool activity runs them.
    callModel: createCallModel({ ...deps, calls }, createReadAhead(createToolExecution(toolDeps), catalogue)),
    runTool: createRunTool(toolDeps),
    loadRun,
    loadForkSource,
    notifyParked: createNotifyParked({ notify: deps.notify ?? null, payloadsEncrypted: deps.payloadsEncrypted === true }),
  };
}

/** What a run records of the routes (their filters, not their URLs): absent when there are none, so the run schedules nothing. */
function notifyPlan(notify: NotifySetting | null): NotifyPlan | undefined {
  if (!notify?.routes.length) return undefined;
  return { routes: notify.routes.map((r) => ({ events: r.events ? [...r.events] : null, tools: r.tools ? [...r.tools] : null })) };
}

export type Activities = AgentActivities;
