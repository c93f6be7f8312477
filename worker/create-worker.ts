// Builds a worker for the `agentRun` workflow, the harness's own way: a
// Worker.create with an AgentPlugin (worker/agent-plugin.ts), the one path
// every worker takes. `npm run worker` and `npm start` configure it from the
// environment (createWorkerFromConfig); the tests and benchmarks directly.
import type { PayloadKey } from '../common/payload-keys.js';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../common/tracing.js';
import type { LedgerConfig, ProcessConfig, RetentionConfig, SearchAttributeMode, ToolsetCheck, WorkerVersioning } from '../common/config.js';
import type { Pricing, RunDefaults } from '../common/contract.js';
import type { EffectStore } from '../activities/effects/record.js';
import type { AnyToolDefinition } from '../activities/tools/define-tool.js';
import type { Toolset } from '../activities/tools/toolset.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { SEED_FILES } from '../activities/tools/workspace.js';
import { AgentPlugin, installSeams, type PluginSeams } from './agent-plugin.js';
import type { ModelEndpoint, ModelProviderSetting, PluginLog } from './plugin-options.js';
import type { ModelProvider } from '../activities/ai-sdk-model.js';
import type { LlmProviderName } from '../common/env-schema.js';
import type { TokenSink } from '../common/token-sink.js';
import { providerFromEnv } from './model-provider.js';
import { ENV_NAMES, type SettingNames } from './setting-names.js';
import { WORKFLOWS_PATH } from './workflows-path.js';

export { WORKFLOWS_PATH, WORKFLOW_INTERCEPTOR_MODULES } from './workflows-path.js';
export { NO_WORKFLOW_SPANS, REPLAY_SINKS } from './sinks.js';

/** Worker.create's own options, as the harness names them: what the plugin does not own. */
export interface WorkerProcessOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  /** A pre-built bundle (tests build it once); otherwise workflows/ is bundled now. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** At least 1 (see ZERO_CACHE_REFUSED); undefined: the SDK's default. */
  maxCachedWorkflows?: number;
  /** How long a run's next task waits for the worker that caches it before any worker may take it. SDK default: 10 s. */
  stickyTimeoutMs?: number;
  /** Poll activity tasks only (no workflow tasks): a worker that only runs model and tool calls. */
  activitiesOnly?: boolean;
  /**
   * Run the loop only: workflow tasks and the local activities they start,
   * never a model or tool call of the task queue (another process runs those).
   */
  loopOnly?: boolean;
  /** How long a shutdown lets running activities finish before cancelling them (SDK default: 0). */
  shutdownGraceTimeMs?: number;
  /** A Worker Deployment version to poll as; unset: an unversioned worker. */
  versioning?: WorkerVersioning | null;
}

/**
 * The tests' and benchmarks' worker: Worker.create's options and the
 * plugin's, flat. The standalone worker does not come here: it makes
 * AgentPluginOptions from the environment (worker/env-options.ts).
 */
export interface AgentWorkerOptions extends WorkerProcessOptions {
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
  /** What the harness's tests and experiments install (test/helpers/faults.ts: a crash, a held write); never a plugin option. */
  seams?: PluginSeams;
  /** Defaults for what a run's input leaves out (resolved once per run). */
  runDefaults?: Partial<RunDefaults>;
  /** Prices of models beyond the scripted provider's (AGENT_MODEL_PRICES). */
  modelPrices?: Record<string, Pricing>;
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
  /** OpenTelemetry spans for the workflow and its activities (common/tracing.ts), or null/unset: none exported. */
  tracing?: Tracing | null;
  /** How often a running model or tool call heartbeats (AGENT_HEARTBEAT_MS; default common/heartbeat.ts). */
  heartbeatEveryMs?: number;
  /** Payload encryption keys as values (first encrypts); absent: AGENT_PAYLOAD_KEYS; null: none. */
  payloadKeys?: readonly PayloadKey[] | null;
}

/**
 * Worker.create's own settings of a worker configured from the environment
 * (common/config.ts ProcessConfig), beside its AgentPlugin made of
 * worker/env-options.ts's options.
 */
export function workerProcessOptions(cfg: ProcessConfig): Omit<WorkerProcessOptions, 'connection'> {
  return {
    namespace: cfg.namespace,
    taskQueue: cfg.taskQueue,
    ...(cfg.workflowBundlePath ? { workflowBundle: { codePath: cfg.workflowBundlePath } } : {}),
    ...(cfg.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: cfg.maxCachedWorkflows } : {}),
    ...(cfg.stickyTimeoutMs !== undefined ? { stickyTimeoutMs: cfg.stickyTimeoutMs } : {}),
    versioning: cfg.versioning,
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
export async function createWorkerWith(opts: WorkerProcessOptions, plugin: AgentPlugin): Promise<Worker> {
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
