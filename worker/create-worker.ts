// Builds a worker for the `agentRun` workflow, the harness's own way: a
// Worker.create with an AgentPlugin (worker/agent-plugin.ts), the one path
// every worker takes. `npm run worker` and `npm start` configure it from the
// environment (createWorkerFromConfig); the tests and benchmarks directly.
import type { PayloadKey } from '../node/payload-keys.js';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../node/tracing.js';
import type { LedgerConfig, HarnessConfig, RetentionConfig, SearchAttributeMode, ToolsetCheck, WorkerVersioning } from '../node/config.js';
import type { Pricing, RunDefaults } from '../common/contract.js';
import type { EffectStore } from '../activities/effects/record.js';
import type { AnyToolDefinition } from '../activities/tools/define-tool.js';
import type { Toolset } from '../activities/tools/toolset.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { SEED_FILES } from '../activities/tools/workspace.js';
import { AgentPlugin, installSeams, type PluginSeams } from './agent-plugin.js';
import type { ModelEndpoint, ModelProviderSetting, PluginLog } from './plugin-options.js';
import type { ModelProvider } from '../activities/ai-sdk-model.js';
import type { LlmProviderName } from '../node/env-schema.js';
import type { TokenSink } from '../node/token-sink.js';
import { providerFromEnv } from './model-provider.js';
import { ENV_NAMES, type SettingNames } from './setting-names.js';
import { WORKFLOWS_PATH } from './workflows-path.js';

export { WORKFLOWS_PATH, WORKFLOW_INTERCEPTOR_MODULES } from './workflows-path.js';
export { NO_WORKFLOW_SPANS, REPLAY_SINKS } from './sinks.js';

export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  llmBaseUrl: string;
  llmApiKey?: string;
  /** LLM_PROVIDER: an AI SDK provider package at llmBaseUrl instead of the built-in client (default `builtin`). */
  llmProvider?: LlmProviderName;
  /** An AI SDK provider of the caller's own (wins over llmProvider; llmBaseUrl is then unused). */
  modelProvider?: ModelProvider;
  /** What a run's live stream carries (AGENT_LIVE_STREAM; see AgentPluginOptions.stream). */
  stream?: 'full' | 'events';
  /** Where each model attempt's reply text goes instead of the live stream. */
  tokens?: TokenSink;
  /** Overrides the model name of every run (LLM_MODEL). */
  llmModel?: string;
  workspaceRoot: string;
  /** The effect ledger of write tools, opened by the caller (default: a folder store in workspaceRoot/.ledger). */
  effects?: EffectStore;
  /** Where the plugin opens the ledger (AGENT_LEDGER_URL, LEDGER_DIR), when `effects` is not given. */
  ledger?: LedgerConfig;
  /** Default: workspaceRoot/.messages. */
  messageStoreDir?: string;
  traceDir: string;
  /** A pre-built bundle (tests build it once); otherwise workflows/ is bundled now. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** At least 1 (see ZERO_CACHE_REFUSED); undefined: the SDK's default. */
  maxCachedWorkflows?: number;
  /** How long a run's next task waits for the worker that caches it before any worker may take it. SDK default: 10 s. */
  stickyTimeoutMs?: number;
  /** What the harness's tests and experiments install (test/helpers/faults.ts: a crash, a held write); never a plugin option. */
  seams?: PluginSeams;
  /** Defaults for what a run's input leaves out (resolved once per run). */
  runDefaults?: Partial<RunDefaults>;
  /** Prices of models beyond the scripted provider's (AGENT_MODEL_PRICES). */
  modelPrices?: Record<string, Pricing>;
  /** Poll activity tasks only (no workflow tasks): a worker that only runs model and tool calls. */
  activitiesOnly?: boolean;
  /**
   * Run the loop only: workflow tasks and the local activities they start,
   * never a model or tool call of the task queue (another process runs those).
   */
  loopOnly?: boolean;
  /** How long a shutdown lets running activities finish before cancelling them (SDK default: 0). */
  shutdownGraceTimeMs?: number;
  /** The tools offered, built-ins included (a test seam; default: the built-ins plus `tools`). */
  toolset?: Toolset;
  /** Tools beside the built-ins (the tool modules' values). */
  tools?: readonly AnyToolDefinition[];
  /** Offer the built-in tools (AgentPlugin's builtinTools). Default here true: the standalone worker and the tests' workers are the demo's; a team's AgentPlugin defaults to false. */
  builtinTools?: boolean;
  /** The files a new workspace starts with. Default here: the demo files (SEED_FILES) the scripted scenarios read; a team's AgentPlugin seeds none. */
  seedFiles?: Readonly<Record<string, string>>;
  /** Offer only these (AGENT_TOOLS). */
  only?: readonly string[] | null;
  /** The MCP servers' config file (AGENT_MCP_CONFIG). */
  mcpConfigPath?: string | null;
  /** Default here: off (a test's worker removes nothing). */
  retention?: RetentionConfig;
  /** Default `create`. */
  searchAttributes?: SearchAttributeMode;
  /** Default `refuse`. */
  toolsetCheck?: ToolsetCheck;
  /** Poll the queue named after the tools when they differ from the built-ins (AGENT_TASK_QUEUE unset). */
  ownQueue?: boolean;
  /** Start-up notes (default: the runtime's logger). */
  log?: PluginLog;
  /** The words refusals use (default: the environment variables). */
  names?: SettingNames;
  /** A Worker Deployment version to poll as; unset: an unversioned worker. */
  versioning?: WorkerVersioning | null;
  /** OpenTelemetry spans for the workflow and its activities (node/tracing.ts), or null/unset: none exported. */
  tracing?: Tracing | null;
  /** How often a running model or tool call heartbeats (AGENT_HEARTBEAT_MS; default node/heartbeat.ts). */
  heartbeatEveryMs?: number;
  /** Payload encryption keys as values (first encrypts); absent: AGENT_PAYLOAD_KEYS; null: none. */
  payloadKeys?: readonly PayloadKey[] | null;
}

/**
 * The settings of a worker configured from the environment (node/config.ts),
 * as `npm run worker` and `npm start` run it: every variable becomes an
 * AgentPlugin option or one of Worker.create's own, and refusals name the
 * variables. `tools`: the tool modules' (toolsOfModules(cfg.toolModules)).
 */
export function workerSettingsFromConfig(cfg: HarnessConfig, tools: readonly AnyToolDefinition[], tracing: Tracing | null, log: PluginLog = console): Omit<AgentWorkerOptions, 'connection'> {
  return {
    tracing,
    tools,
    only: cfg.toolNames,
    mcpConfigPath: cfg.mcpConfigPath,
    namespace: cfg.namespace,
    taskQueue: cfg.taskQueue,
    ownQueue: !cfg.taskQueueNamed,
    llmBaseUrl: cfg.llmBaseUrl,
    llmApiKey: cfg.llmApiKey,
    llmProvider: cfg.llmProvider,
    stream: cfg.liveStream,
    llmModel: cfg.llmModel,
    workspaceRoot: cfg.workspaceRoot,
    ledger: cfg.ledger,
    retention: cfg.retention,
    messageStoreDir: cfg.messageStoreDir,
    traceDir: cfg.traceDir,
    workflowBundle: cfg.workflowBundlePath ? { codePath: cfg.workflowBundlePath } : undefined,
    maxCachedWorkflows: cfg.maxCachedWorkflows,
    stickyTimeoutMs: cfg.stickyTimeoutMs,
    runDefaults: cfg.runDefaults,
    modelPrices: cfg.modelPrices,
    versioning: cfg.versioning,
    heartbeatEveryMs: cfg.heartbeatEveryMs,
    searchAttributes: cfg.searchAttributes,
    toolsetCheck: cfg.toolsetCheck,
    log,
    names: ENV_NAMES,
  };
}

/** A worker of the harness alone (its workflows, its activities); see startAgentWorker. */
export async function createAgentWorker(opts: AgentWorkerOptions): Promise<Worker> {
  return (await startAgentWorker(opts)).worker;
}

/** Worker.create with an AgentPlugin made of these options, and the plugin (what it offers, for a start-up line). */
export async function startAgentWorker(opts: AgentWorkerOptions): Promise<{ worker: Worker; plugin: AgentPlugin }> {
  const plugin = agentPluginFor(opts);
  return { worker: await createWorkerWith(opts, plugin), plugin };
}

/** The model setting of these options: the caller's provider, LLM_PROVIDER's, or the built-in client's endpoint. */
function modelSettingOf(opts: Omit<AgentWorkerOptions, 'connection'>): ModelEndpoint | ModelProviderSetting {
  const provider = opts.modelProvider ?? providerFromEnv(opts.llmProvider ?? 'builtin', opts.llmBaseUrl, opts.llmApiKey);
  const model = opts.llmModel ? { model: opts.llmModel } : {};
  return provider ? { provider, ...model } : { baseUrl: opts.llmBaseUrl, ...(opts.llmApiKey ? { apiKey: opts.llmApiKey } : {}), ...model };
}

/** The plugin these settings make: their check (and the MCP config's) throws here, before anything connects. */
export function agentPluginFor(opts: Omit<AgentWorkerOptions, 'connection'>): AgentPlugin {
  // A Toolset holds the built-ins already: the plugin adds them itself.
  const tools = opts.toolset ? opts.toolset.definitions().filter((d) => !BUILTIN_TOOLS.includes(d)) : (opts.tools ?? []);
  const only = opts.toolset ? opts.toolset.names() : opts.only;
  const plugin = new AgentPlugin(
    {
      model: modelSettingOf(opts),
      ...(opts.tokens ? { tokens: opts.tokens } : {}),
      ...(opts.stream ? { stream: opts.stream } : {}),
      workspace: opts.workspaceRoot,
      tools,
      builtinTools: opts.toolset ? opts.toolset.definitions().some((d) => BUILTIN_TOOLS.includes(d)) : (opts.builtinTools ?? true),
      seedFiles: opts.seedFiles ?? SEED_FILES,
      ...(only ? { only } : {}),
      ...(opts.mcpConfigPath ? { mcp: opts.mcpConfigPath } : {}),
      ...(opts.effects ? { ledger: opts.effects } : opts.ledger ? { ledger: opts.ledger } : {}),
      retention: opts.retention ?? { enabled: false },
      traceDir: opts.traceDir,
      ...(opts.messageStoreDir ? { messageStoreDir: opts.messageStoreDir } : {}),
      ...(opts.runDefaults ? { runDefaults: opts.runDefaults } : {}),
      ...(opts.modelPrices ? { modelPrices: opts.modelPrices } : {}),
      ...(opts.heartbeatEveryMs !== undefined ? { heartbeatEveryMs: opts.heartbeatEveryMs } : {}),
      ...(opts.payloadKeys !== undefined ? { payloadKeys: opts.payloadKeys } : {}),
      ...(opts.searchAttributes ? { searchAttributes: opts.searchAttributes } : {}),
      ...(opts.toolsetCheck ? { toolsetCheck: opts.toolsetCheck } : {}),
      ...(opts.ownQueue ? { ownQueue: true } : {}),
      ...(opts.tracing ? { tracing: opts.tracing } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    },
    opts.names ?? ENV_NAMES,
  );
  return opts.seams ? installSeams(plugin, opts.seams) : plugin;
}

/**
 * Worker.create with the harness's workflows and this plugin. A Worker.create
 * that fails after the plugin configured it (a bundle that does not load)
 * closes what the plugin opened.
 */
export async function createWorkerWith(opts: AgentWorkerOptions, plugin: AgentPlugin): Promise<Worker> {
  try {
    return await Worker.create({
      connection: opts.connection,
      namespace: opts.namespace ?? 'default',
      taskQueue: opts.taskQueue,
      ...(opts.activitiesOnly ? {} : opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
      ...(opts.loopOnly ? { enableNonLocalActivities: false } : {}),
      ...(opts.versioning ? { workerDeploymentOptions: deploymentOptions(opts.versioning) } : {}),
      ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
      ...(opts.stickyTimeoutMs !== undefined ? { stickyQueueScheduleToStartTimeout: opts.stickyTimeoutMs } : {}),
      ...(opts.shutdownGraceTimeMs !== undefined ? { shutdownGraceTime: opts.shutdownGraceTimeMs } : {}),
      plugins: [plugin],
    });
  } catch (err) {
    await plugin.close();
    throw err;
  }
}

/**
 * The version this worker polls as. The behaviour applies to every workflow
 * type this worker registers that does not declare its own: here, agentRun
 * (and its research children, which start on their parent's version).
 */
function deploymentOptions(v: WorkerVersioning): NonNullable<WorkerOptions['workerDeploymentOptions']> {
  return {
    version: { deploymentName: v.deploymentName, buildId: v.buildId },
    useWorkerVersioning: true,
    defaultVersioningBehavior: v.defaultBehavior,
  };
}
