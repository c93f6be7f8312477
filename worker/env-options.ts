// The standalone worker's configuration (`npm run worker`, `npm start`): the
// environment read straight into AgentPlugin's options, so each setting has
// one shape, the option's (worker/plugin-options.ts), and one check, the
// plugin's schema (a refusal names the variable: ENV_NAMES). Beside them, the
// few settings the plugin does not own: how to reach Temporal, the task
// queue, the ports and Worker.create's own (node/config.ts ProcessConfig).
import { checkedEnv, ledgerFromEnv, list, loadConfig, modelPricesFromEnv, providerPortFromEnv, retentionFromEnv, runDefaultsFromEnv, traceDirFromEnv, workspaceFromEnv, type ProcessConfig } from '../node/config.js';
import { resolve } from 'node:path';
import type { CheckedEnv } from '../node/env-schema.js';
import { SEED_FILES } from '../activities/tools/workspace.js';
import { providerFromEnv } from './model-provider.js';
import type { AgentPluginOptions, PluginLog, PluginTracing } from './plugin-options.js';
import type { AnyToolDefinition } from '../activities/tools/define-tool.js';
import { AgentPlugin, installSeams, type PluginSeams } from './agent-plugin.js';
import { ENV_NAMES } from './setting-names.js';

/** The options the environment makes; the process adds the values it alone can make (imported tools, a started tracer, a logger). */
export type EnvPluginOptions = Omit<AgentPluginOptions, 'tools' | 'tracing' | 'log' | 'tokens' | 'payloadKeys'>;

/** The standalone worker's settings: the plugin's options, and the process's own. */
export interface StandaloneWorkerConfig {
  /** Connection, task queue, ports, Worker.create's own settings. */
  process: ProcessConfig;
  /** AgentPlugin's options, as the variables give them. */
  plugin: EnvPluginOptions;
  /** Where model calls go, for the start-up line: `http://…/v1` or `http://…/v1 (anthropic)`. */
  modelAt: string;
}

/**
 * Reads the environment as the standalone worker does. Its defaults are the
 * demo's: the built-in tools and the demo seed files (the scripted scenarios
 * and `temporal workflow start` runs use them), where a team's AgentPlugin
 * has neither by default. A bad variable throws one line naming it.
 */
export function standaloneWorkerConfig(env: NodeJS.ProcessEnv = process.env): StandaloneWorkerConfig {
  const proc = loadConfig(env);
  return { process: proc, ...pluginOptionsFromEnv(env, proc) };
}

/** AgentPlugin's options from the environment (see standaloneWorkerConfig). */
export function pluginOptionsFromEnv(env: NodeJS.ProcessEnv = process.env, proc: Pick<ProcessConfig, 'taskQueueNamed'> = { taskQueueNamed: !!env.AGENT_TASK_QUEUE }): { plugin: EnvPluginOptions; modelAt: string } {
  const v = checkedEnv(env);
  const baseUrl = env.LLM_BASE_URL || `http://127.0.0.1:${providerPortFromEnv(env)}/v1`;
  const apiKey = env.LLM_API_KEY || undefined;
  const kind = v.LLM_PROVIDER ?? 'builtin';
  const provider = providerFromEnv(kind, baseUrl, apiKey);
  const model = env.LLM_MODEL ? { model: env.LLM_MODEL } : {};
  const workspace = workspaceFromEnv(env);
  const only = list(env.AGENT_TOOLS);
  const plugin: EnvPluginOptions = {
    model: provider ? { provider, ...model } : { baseUrl, ...(apiKey ? { apiKey } : {}), ...model },
    ...(v.AGENT_LIVE_STREAM ? { stream: v.AGENT_LIVE_STREAM } : {}),
    workspace,
    builtinTools: true,
    seedFiles: SEED_FILES,
    ...(only ? { only } : {}),
    ...(env.AGENT_MCP_CONFIG ? { mcp: resolve(env.AGENT_MCP_CONFIG) } : {}),
    ledger: ledgerFromEnv(env),
    retention: retentionFromEnv(v),
    traceDir: traceDirFromEnv(env),
    messageStoreDir: resolve(env.MESSAGE_STORE_DIR || resolve(workspace, '.messages')),
    runDefaults: runDefaultsFromEnv(env, v),
    modelPrices: modelPricesFromEnv(env.AGENT_MODEL_PRICES),
    ...(v.AGENT_HEARTBEAT_MS !== undefined ? { heartbeatEveryMs: v.AGENT_HEARTBEAT_MS } : {}),
    ...(v.AGENT_SEARCH_ATTRIBUTES ? { searchAttributes: v.AGENT_SEARCH_ATTRIBUTES } : {}),
    ...(v.AGENT_TOOLSET_CHECK ? { toolsetCheck: v.AGENT_TOOLSET_CHECK } : {}),
    // AGENT_TASK_QUEUE unset: a worker whose tools differ from the built-ins polls a queue named after them.
    ownQueue: !proc.taskQueueNamed,
    ...notifyFromEnv(v),
  };
  return { plugin, modelAt: `${baseUrl}${kind === 'builtin' ? '' : ` (${kind})`}` };
}

/** AGENT_NOTIFY_URL (a JSON webhook for every event) and AGENT_NOTIFY_SLACK_URL (a Slack incoming webhook), with AGENT_OPS_URL as the inbox they link to. */
function notifyFromEnv(v: CheckedEnv): Pick<EnvPluginOptions, 'notify'> {
  const routes = [
    ...(v.AGENT_NOTIFY_URL ? [{ url: v.AGENT_NOTIFY_URL, format: 'json' as const }] : []),
    ...(v.AGENT_NOTIFY_SLACK_URL ? [{ url: v.AGENT_NOTIFY_SLACK_URL, format: 'slack' as const }] : []),
  ];
  if (!routes.length) return {};
  return { notify: { routes, ...(v.AGENT_OPS_URL ? { inboxUrl: v.AGENT_OPS_URL } : {}) } };
}

/**
 * The standalone worker's AgentPlugin: the environment's options with the
 * values the process made (the AGENT_TOOLS_MODULES tools, its tracer), checked
 * by the plugin's schema with refusals naming the variables (ENV_NAMES).
 * `seams`: what a test installs (test/helpers/faults.ts), never set by the product.
 */
export function standalonePlugin(options: EnvPluginOptions, tools: readonly AnyToolDefinition[], tracing: PluginTracing | null, log: PluginLog = console, seams?: PluginSeams): AgentPlugin {
  const plugin = new AgentPlugin({ ...options, tools, ...(tracing ? { tracing } : {}), log }, ENV_NAMES);
  return seams ? installSeams(plugin, seams) : plugin;
}
