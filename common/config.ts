// Every environment variable the processes read, with its default, in one
// place (the README's configuration table mirrors this file).
import { resolve } from 'node:path';
import { PROJECT_ROOT } from './project-root';
import { DEFAULT_TASK_QUEUE, type RunDefaults } from './contract';

const DATA = resolve(PROJECT_ROOT, '.data');

export interface HarnessConfig {
  /** null: start (or reuse) the embedded dev server. */
  temporalAddress: string | null;
  namespace: string;
  taskQueue: string;
  llmBaseUrl: string;
  llmApiKey: string | undefined;
  /** Sent as every request's `model` instead of the run's: the seam to a real server. */
  llmModel: string | undefined;
  workspaceRoot: string;
  /** Where write tools record what they did, per idempotency key. */
  ledgerDir: string;
  /** Where model calls file prompt messages by content address (a cache: safe to delete). */
  messageStoreDir: string;
  traceDir: string;
  devServer: { port: number; uiPort: number; dbFile: string };
  providerPort: number;
  /** A workflow bundle built ahead of time (skips bundling at start). */
  workflowBundlePath: string | undefined;
  /** Workflow cache size (>= 1; undefined: the SDK's default, sized from memory). */
  maxCachedWorkflows: number | undefined;
  /** How long a task waits for its cached worker before any worker may take it (WORKER_STICKY_TIMEOUT_MS). */
  stickyTimeoutMs: number | undefined;
  /**
   * This worker's defaults for what a run's input leaves out. A run resolves
   * them once, at its start: changing them affects new runs only.
   */
  runDefaults: Partial<RunDefaults>;
  /** Modules of the deployment's own tools (AGENT_TOOLS_MODULES, comma-separated paths). */
  toolModules: string[];
  /** Offer only these tools (AGENT_TOOLS, comma-separated), or null for all. */
  toolNames: string[] | null;
  /**
   * A JSON file of MCP servers whose tools this worker offers (AGENT_MCP_CONFIG;
   * format in the README's "Bring your own tools"), or null for none. The
   * file's `${NAME}` references in server env and headers read this process's
   * environment (activities/tools/mcp/config.ts).
   */
  mcpConfigPath: string | null;
  /** host:port of the Prometheus endpoint (METRICS_PORT, METRICS_HOST), or null for none. */
  metricsAddress: string | null;
  /** Worker Versioning (WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID, WORKER_VERSIONING_BEHAVIOR), or null: an unversioned worker. */
  versioning: WorkerVersioning | null;
}

/**
 * Where this worker sits in a Worker Deployment. PINNED: a run finishes on
 * the build that started it (old workers drain their runs while new ones take
 * new runs). AUTO_UPGRADE: a run moves to the deployment's current build at
 * its next workflow task, so the new code must replay the old history.
 */
export interface WorkerVersioning {
  deploymentName: string;
  buildId: string;
  defaultBehavior: VersioningBehaviorName;
}

export const VERSIONING_BEHAVIORS = ['PINNED', 'AUTO_UPGRADE'] as const;
export type VersioningBehaviorName = (typeof VERSIONING_BEHAVIORS)[number];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): HarnessConfig {
  const devPort = int(env, 'TEMPORAL_DEV_PORT', 7233);
  const providerPort = int(env, 'PORT', 8787);
  return {
    temporalAddress: env.TEMPORAL_ADDRESS || null,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.AGENT_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    llmBaseUrl: env.LLM_BASE_URL || `http://127.0.0.1:${providerPort}/v1`,
    llmApiKey: env.LLM_API_KEY || undefined,
    llmModel: env.LLM_MODEL || undefined,
    workspaceRoot: resolve(env.AGENT_WORKSPACE || resolve(DATA, 'workspace')),
    ledgerDir: resolve(env.LEDGER_DIR || resolve(env.AGENT_WORKSPACE || resolve(DATA, 'workspace'), '.ledger')),
    messageStoreDir: resolve(env.MESSAGE_STORE_DIR || resolve(env.AGENT_WORKSPACE || resolve(DATA, 'workspace'), '.messages')),
    traceDir: resolve(env.TRACE_DIR || resolve(DATA, 'traces')),
    devServer: {
      port: devPort,
      uiPort: int(env, 'TEMPORAL_UI_PORT', devPort + 1000),
      dbFile: resolve(env.TEMPORAL_DB_FILE || resolve(DATA, 'temporal.db')),
    },
    providerPort,
    workflowBundlePath: env.WORKFLOW_BUNDLE_PATH || undefined,
    maxCachedWorkflows: env.WORKER_MAX_CACHED_WORKFLOWS === undefined || env.WORKER_MAX_CACHED_WORKFLOWS === '' ? undefined : cacheSize(env),
    stickyTimeoutMs: env.WORKER_STICKY_TIMEOUT_MS ? int(env, 'WORKER_STICKY_TIMEOUT_MS', 0) : undefined,
    toolModules: list(env.AGENT_TOOLS_MODULES) ?? [],
    toolNames: list(env.AGENT_TOOLS),
    versioning: workerVersioning(env),
    mcpConfigPath: env.AGENT_MCP_CONFIG ? resolve(env.AGENT_MCP_CONFIG) : null,
    metricsAddress: env.METRICS_PORT && env.METRICS_PORT !== 'off' ? `${env.METRICS_HOST || '127.0.0.1'}:${int(env, 'METRICS_PORT', 9464)}` : null,
    runDefaults: {
      ...(env.AGENT_DEFAULT_MAX_TURNS ? { maxTurns: int(env, 'AGENT_DEFAULT_MAX_TURNS', 0) } : {}),
      ...(env.AGENT_DEFAULT_BUDGET_USD ? { maxBudgetUsd: positiveNumber(env, 'AGENT_DEFAULT_BUDGET_USD') } : {}),
      ...(env.AGENT_DEFAULT_APPROVAL_TIMEOUT_MS ? { approvalTimeoutMs: int(env, 'AGENT_DEFAULT_APPROVAL_TIMEOUT_MS', 0) } : {}),
    },
  };
}

function list(raw: string | undefined): string[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  return raw.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/**
 * Both names or neither: a worker with a build id but no deployment (or the
 * reverse) would silently poll unversioned and take every run, old and new.
 */
function workerVersioning(env: NodeJS.ProcessEnv): WorkerVersioning | null {
  const deploymentName = env.WORKER_DEPLOYMENT_NAME || undefined;
  const buildId = env.WORKER_BUILD_ID || undefined;
  const behavior = env.WORKER_VERSIONING_BEHAVIOR || undefined;
  if (!deploymentName && !buildId) {
    if (behavior) throw new Error('WORKER_VERSIONING_BEHAVIOR is set but WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID are not: set both to version this worker, or unset it');
    return null;
  }
  if (!deploymentName) throw new Error('WORKER_BUILD_ID is set but WORKER_DEPLOYMENT_NAME is not: set both (a versioned worker) or neither');
  if (!buildId) throw new Error('WORKER_DEPLOYMENT_NAME is set but WORKER_BUILD_ID is not: set both (a versioned worker) or neither');
  // The server names a version `<deployment>:<build id>` (formerly with a
  // dot) and refuses both characters in a name; say so before connecting.
  if (/[.:]/.test(deploymentName)) throw new Error(`WORKER_DEPLOYMENT_NAME must not contain "." or ":", got ${JSON.stringify(deploymentName)}`);
  const defaultBehavior = behavior ?? 'PINNED';
  if (!isVersioningBehavior(defaultBehavior)) {
    throw new Error(`WORKER_VERSIONING_BEHAVIOR must be one of ${VERSIONING_BEHAVIORS.join(', ')}, got ${JSON.stringify(behavior)}`);
  }
  return { deploymentName, buildId, defaultBehavior };
}

function isVersioningBehavior(s: string): s is VersioningBehaviorName {
  return (VERSIONING_BEHAVIORS as readonly string[]).includes(s);
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string): number {
  const n = Number(env[name]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a number > 0, got ${JSON.stringify(env[name])}`);
  return n;
}

function cacheSize(env: NodeJS.ProcessEnv): number {
  const raw = env.WORKER_MAX_CACHED_WORKFLOWS;
  const n = Number(raw);
  if (n === 0) throw new Error(ZERO_CACHE_REFUSED);
  if (!Number.isInteger(n) || n < 0) throw new Error(`WORKER_MAX_CACHED_WORKFLOWS must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * Why a cache of 0 is refused: the SDK's core then keeps one slot, and any task
 * for another run evicts the run that holds it, cancelling that run's local
 * activity (our fast tools) mid-call. Under steady traffic (a status query
 * polled in a loop is enough) the same run is evicted on every retry and never
 * finishes. sdk-core logs it as "Eviction requested while local activities
 * are still in flight".
 */
export const ZERO_CACHE_REFUSED =
  'WORKER_MAX_CACHED_WORKFLOWS=0 is refused: without a workflow cache, any other run\'s task evicts a run in the middle of a local activity (the fast read-only tools), ' +
  'which is cancelled and retried, and under steady traffic never finishes. Use at least 1; WORKER_STICKY_TIMEOUT_MS shortens how long a run waits for a dead worker.';

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}
