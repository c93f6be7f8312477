// Builds a worker for the `agentRun` workflow, the harness's own way: a
// Worker.create with an AgentPlugin (worker/agent-plugin.ts), the one path
// every worker takes. `npm run worker` and `npm start` make the plugin from
// the environment (./env-options.ts) and Worker.create's settings with
// workerProcessOptions; the tests and benchmarks give both directly.
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { ProcessConfig, WorkerVersioning } from '../node/config.js';
import type { Toolset } from '../activities/tools/toolset.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { SEED_FILES } from '../activities/tools/workspace.js';
import { AgentPlugin, installSeams, type PluginSeams } from './agent-plugin.js';
import type { AgentPluginOptions } from './plugin-options.js';
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
 * The tests' and benchmarks' worker: Worker.create's own options, and
 * AgentPlugin's options as a team writes them (one shape per setting). The
 * standalone worker does not come here: it makes its plugin from the
 * environment (worker/env-options.ts).
 */
export interface AgentWorkerOptions extends WorkerProcessOptions {
  /**
   * AgentPlugin's options. Defaults here, unlike a team's AgentPlugin: the
   * built-in tools and the demo seed files (SEED_FILES, which the scripted
   * scenarios read), and retention off (a test's worker removes nothing).
   */
  plugin: AgentPluginOptions;
  /** The tools offered, built-ins included (a test seam; wins over plugin.tools and plugin.builtinTools). */
  toolset?: Toolset;
  /** What the harness's tests and experiments install (test/helpers/faults.ts: a crash, a held write); never a plugin option. */
  seams?: PluginSeams;
  /** The words refusals use (default: the environment variables, as before). */
  names?: SettingNames;
}

/**
 * Worker.create's own settings of a worker configured from the environment
 * (node/config.ts ProcessConfig), beside its AgentPlugin made of
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

/** The plugin these options make: their check (and the MCP config's) throws here, before anything connects. */
export function agentPluginFor(opts: Pick<AgentWorkerOptions, 'plugin' | 'toolset' | 'seams' | 'names'>): AgentPlugin {
  const { toolset } = opts;
  const plugin = new AgentPlugin(
    {
      builtinTools: true,
      seedFiles: SEED_FILES,
      retention: { enabled: false },
      ...opts.plugin,
      // A Toolset holds the built-ins already: the plugin adds them itself.
      ...(toolset
        ? {
            tools: toolset.definitions().filter((d) => !BUILTIN_TOOLS.includes(d)),
            builtinTools: toolset.definitions().some((d) => BUILTIN_TOOLS.includes(d)),
            only: toolset.names(),
          }
        : {}),
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
