// Every environment variable the processes read, with its default, in one
// place (docs/configuration.md's environment table mirrors this file).
import { payloadKeysFromEnv } from './payload-keys.js';
import { existsSync, readFileSync } from 'node:fs';
import { parseApproverPolicy, type ApproverPolicy } from '../common/signed-decision.js';
import { resolve } from 'node:path';
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import { PROJECT_ROOT } from './project-root.js';
import { DEFAULT_TASK_QUEUE, type Pricing, type RunDefaults } from '../common/contract.js';
import { envSchema, modelPricesSchema, SEARCH_ATTRIBUTE_MODES, TOOLSET_CHECKS, type CheckedEnv } from './env-schema.js';
import { firstProblem } from '../common/schema-problem.js';

const DATA = resolve(PROJECT_ROOT, '.data');

/**
 * What a process of the harness reads from the environment beside the
 * AgentPlugin's options: how to reach Temporal, the task queue, the ports,
 * and Worker.create's own settings. Every setting the plugin owns (model,
 * workspace, ledger, retention, run defaults, prices, …) is read by
 * worker/env-options.ts straight into AgentPluginOptions, so its shape exists
 * once: the plugin option.
 */
export interface ProcessConfig {
  /** null: start (or reuse) the embedded dev server. From TEMPORAL_ADDRESS or the selected profile. */
  temporalAddress: string | null;
  /** The Temporal namespace (TEMPORAL_NAMESPACE or the profile's; default `default`). */
  namespace: string;
  /** How to reach temporalAddress: TLS, API key, gRPC headers (the profile and the TEMPORAL_* variables). */
  temporalConnection: TemporalConnection;
  /** The task queue clients start runs on (AGENT_TASK_QUEUE, default `agent-harness`). */
  taskQueue: string;
  /**
   * Whether AGENT_TASK_QUEUE names the queue. If not, a worker whose tools
   * differ from the built-in set polls a queue of its own (the plugin option ownQueue).
   */
  taskQueueNamed: boolean;
  /** The embedded dev server's gRPC and Web UI ports and SQLite file (TEMPORAL_DEV_PORT, …), used when temporalAddress is null. */
  devServer: { port: number; uiPort: number; dbFile: string };
  /** The scripted provider's port (PORT, default 8787); the model endpoint's default is on it. */
  providerPort: number;
  /** Where the JSONL traces are written (TRACE_DIR): the CLI follows a run there; the worker's plugin option traceDir is this. */
  traceDir: string;
  /** Modules of the deployment's own tools (AGENT_TOOLS_MODULES, comma-separated paths), imported into the plugin option `tools`. */
  toolModules: string[];
  /** A workflow bundle built ahead of time (skips bundling at start): Worker.create's workflowBundle. */
  workflowBundlePath: string | undefined;
  /** Workflow cache size (>= 1; undefined: the SDK's default, sized from memory): Worker.create's maxCachedWorkflows. */
  maxCachedWorkflows: number | undefined;
  /** How long a task waits for its cached worker before any worker may take it (WORKER_STICKY_TIMEOUT_MS). */
  stickyTimeoutMs: number | undefined;
  /** host:port of the Prometheus endpoint (METRICS_PORT, METRICS_HOST), or null for none. */
  metricsAddress: string | null;
  /** Worker Versioning (WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID, WORKER_VERSIONING_BEHAVIOR), or null: an unversioned worker. */
  versioning: WorkerVersioning | null;
  /** Where spans go (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces), or null: no tracing. */
  tracing: TracingConfig | null;
}

export { SEARCH_ATTRIBUTE_MODES, TOOLSET_CHECKS } from './env-schema.js';
/** What a worker does when its task queue is polled by workers offering other tools: `refuse` to start, or `warn`. */
export type ToolsetCheck = (typeof TOOLSET_CHECKS)[number];

/** What a worker does when its namespace lacks a search attribute: `create` it, or `check` and stop naming it. */
export type SearchAttributeMode = (typeof SEARCH_ATTRIBUTE_MODES)[number];

/** Where the effect ledger lives: a folder (one host), or a PostgreSQL database every worker reaches. */
export type LedgerConfig = { kind: 'folder'; dir: string } | { kind: 'postgres'; url: string };

/** How long and how large the ledger, the traces and the message store may grow (docs/effects.md). */
export interface RetentionConfig {
  /** false: the worker removes nothing (AGENT_RETENTION=off). */
  enabled: boolean;
  /**
   * Ledger records and traces of runs closed longer ago than this go, and
   * messages unused for this long; null: the namespace's retention
   * (AGENT_RETENTION_MAX_AGE_MS).
   */
  maxAgeMs: number | null;
  /** Past these sizes the oldest of closed runs (least recently used messages) go first; null: no size limit. */
  ledgerMaxBytes: number | null;
  /** The same for the trace files, in bytes. */
  traceMaxBytes: number | null;
  /** The same for the message store, in bytes. */
  messageStoreMaxBytes: number | null;
  /** How often the worker applies it (AGENT_RETENTION_INTERVAL_MS, default 1 h). */
  intervalMs: number;
  /** A line for every pass (AGENT_RETENTION_LOG=passes), or only for passes that removed something (changes, the default). */
  logEveryPass: boolean;
}

/**
 * OpenTelemetry tracing, by OTel's own variable names. The exporter reads the
 * rest of them itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION and
 * their _TRACES_ forms), the batch processor OTEL_BSP_*, and the resource
 * OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
 */
export interface TracingConfig {
  /** The OTLP/HTTP (JSON) traces URL. */
  endpoint: string;
}

/**
 * How to connect to Temporal, as the `temporal` CLI would: the profile
 * TEMPORAL_PROFILE names (default: `default`) in the TOML file
 * TEMPORAL_CONFIG_FILE names (default: ~/.config/temporalio/temporal.toml),
 * overridden by TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 * TEMPORAL_TLS*, TEMPORAL_GRPC_META_* (read by @temporalio/envconfig).
 * Applies only to a configured address: the embedded dev server is plain.
 */
export interface TemporalConnection {
  /** true: TLS with the system's roots; an object: mTLS, a private CA, a server name. */
  tls?: TemporalTls | boolean | null;
  /** Temporal Cloud API key (TEMPORAL_API_KEY), sent as a bearer token. */
  apiKey?: string;
  /** gRPC headers sent with every call (TEMPORAL_GRPC_META_*). */
  metadata?: Record<string, string>;
  /** What was read, for messages: `profile "cloud" of /home/me/.config/temporalio/temporal.toml`. */
  source: string;
}

/** The SDK's TLSConfig, structurally (node/config.ts imports no SDK internals). */
export interface TemporalTls {
  /** The name the server's certificate is checked against, instead of the address's host. */
  serverNameOverride?: string;
  /** A private CA's certificate (PEM bytes) instead of the system's roots. */
  serverRootCACertificate?: Uint8Array;
  /** The client's certificate and key (PEM bytes), for mTLS. */
  clientCertPair?: { crt: Uint8Array; key: Uint8Array };
}

/**
 * Where this worker sits in a Worker Deployment. PINNED: a run finishes on
 * the build that started it (old workers drain their runs while new ones take
 * new runs). AUTO_UPGRADE: a run moves to the deployment's current build at
 * its next workflow task, so the new code must replay the old history.
 */
export interface WorkerVersioning {
  /** The Worker Deployment's name. */
  deploymentName: string;
  /** This worker's build within it. */
  buildId: string;
  /** The versioning behavior of the runs it starts. */
  defaultBehavior: VersioningBehaviorName;
}

/** The versioning behaviors a worker may give its runs. */
export const VERSIONING_BEHAVIORS = ['PINNED', 'AUTO_UPGRADE'] as const;
/** The default versioning behavior of the runs a versioned worker starts. */
export type VersioningBehaviorName = (typeof VERSIONING_BEHAVIORS)[number];

/**
 * The process settings (connection, task queue, ports, Worker.create's own).
 * Every variable of the schema is checked here, so a bad one stops a worker,
 * the CLI or the codec server before it connects, naming it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ProcessConfig {
  const v = checkedEnv(env);
  // Checked here, with the other variables, so a bad key stops a worker, the CLI or the codec server before it connects (read again by dataConverter()).
  payloadKeysFromEnv(env);
  const devPort = v.TEMPORAL_DEV_PORT ?? 7233;
  const temporal = temporalProfile(env);
  return {
    temporalAddress: temporal.address,
    namespace: temporal.namespace,
    temporalConnection: temporal.connection,
    taskQueue: env.AGENT_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    taskQueueNamed: !!env.AGENT_TASK_QUEUE,
    devServer: {
      port: devPort,
      uiPort: v.TEMPORAL_UI_PORT ?? devPort + 1000,
      dbFile: resolve(env.TEMPORAL_DB_FILE || resolve(DATA, 'temporal.db')),
    },
    providerPort: v.PORT ?? DEFAULT_PROVIDER_PORT,
    traceDir: traceDirFromEnv(env),
    toolModules: list(env.AGENT_TOOLS_MODULES) ?? [],
    workflowBundlePath: env.WORKFLOW_BUNDLE_PATH || undefined,
    maxCachedWorkflows: cacheSize(v.WORKER_MAX_CACHED_WORKFLOWS),
    stickyTimeoutMs: v.WORKER_STICKY_TIMEOUT_MS,
    metricsAddress: v.METRICS_PORT ? `${env.METRICS_HOST || '127.0.0.1'}:${v.METRICS_PORT}` : null,
    versioning: workerVersioning(env),
    tracing: tracing(env),
  };
}

/** The scripted provider's port when PORT is unset. */
const DEFAULT_PROVIDER_PORT = 8787;

/** TRACE_DIR, default .data/traces: read by the worker (its plugin option traceDir) and the CLI (which follows a run's trace). */
export function traceDirFromEnv(env: NodeJS.ProcessEnv): string {
  return resolve(env.TRACE_DIR || resolve(DATA, 'traces'));
}

/** The scripted provider's port (PORT) when nothing else names the model endpoint. */
export function providerPortFromEnv(env: NodeJS.ProcessEnv): number {
  return checkedEnv(env).PORT ?? DEFAULT_PROVIDER_PORT;
}

/** AGENT_WORKSPACE, default .data/workspace. */
export function workspaceFromEnv(env: NodeJS.ProcessEnv): string {
  return resolve(env.AGENT_WORKSPACE || resolve(DATA, 'workspace'));
}

/** This worker's defaults for what a run's input leaves out: a run resolves them once, at its start, so changing them affects new runs only. */
export function runDefaultsFromEnv(env: NodeJS.ProcessEnv, v: CheckedEnv = checkedEnv(env)): Partial<RunDefaults> {
  return {
    // The system prompt of runs whose input gives none (`temporal workflow start` runs from ops tooling, say).
    ...(v.AGENT_DEFAULT_SYSTEM ? { system: v.AGENT_DEFAULT_SYSTEM } : {}),
    ...(v.AGENT_DEFAULT_MAX_TURNS ? { maxTurns: v.AGENT_DEFAULT_MAX_TURNS } : {}),
    ...(v.AGENT_DEFAULT_BUDGET_USD ? { maxBudgetUsd: v.AGENT_DEFAULT_BUDGET_USD } : {}),
    ...(v.AGENT_DEFAULT_APPROVAL_TIMEOUT_MS ? { approvalTimeoutMs: v.AGENT_DEFAULT_APPROVAL_TIMEOUT_MS } : {}),
    // How long model calls wait out a provider outage (default 6 h: common/provider-errors.ts).
    ...(v.AGENT_MODEL_OUTAGE_MS ? { modelOutageMs: v.AGENT_MODEL_OUTAGE_MS } : {}),
    // How long tool calls wait out the outage of what they reach (default 6 h: common/provider-errors.ts).
    ...(v.AGENT_TOOL_OUTAGE_MS ? { toolOutageMs: v.AGENT_TOOL_OUTAGE_MS } : {}),
    // Tools whose approval must name the call's argsHash (checked against the offered tools when the worker starts).
    ...(list(env.AGENT_REQUIRE_ARGS_HASH) ? { requireArgsHash: list(env.AGENT_REQUIRE_ARGS_HASH) ?? [] } : {}),
    // A run that ends failed fails its workflow (carrying its result), for Temporal's failure tooling.
    ...(booleanSetting('AGENT_FAIL_WORKFLOW_ON_FAILED', env.AGENT_FAIL_WORKFLOW_ON_FAILED) ? { failedRunsFailWorkflow: true } : {}),
    // Whether a resume or fork whose definition moved under it is refused (default refuse: common/definition.ts).
    ...(v.AGENT_DEFINITION_CHANGE ? { definitionChange: v.AGENT_DEFINITION_CHANGE } : {}),
    // Who may decide what, with their public keys (read and checked here, so a bad file stops the worker at start).
    ...(env.AGENT_APPROVERS ? { approvers: approverPolicy(env.AGENT_APPROVERS) } : {}),
  };
}

/**
 * AGENT_APPROVERS: the path of the policy file (docs/security.md), or the JSON
 * itself when it starts with `{` (handy in a container's environment).
 */
export function approverPolicy(value: string): ApproverPolicy {
  const inline = value.trim().startsWith('{');
  const source = inline ? 'AGENT_APPROVERS' : `AGENT_APPROVERS file ${resolve(value)}`;
  let text: string;
  try {
    text = inline ? value : readFileSync(resolve(value), 'utf8');
  } catch (err) {
    throw new Error(`${source} cannot be read: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${source} is not JSON: ${(err as Error).message}`);
  }
  return parseApproverPolicy(parsed, source);
}

/** The typed variables (./env-schema), an empty one counting as unset; the first bad one stops the process in one line naming it. */
export function checkedEnv(env: NodeJS.ProcessEnv): CheckedEnv {
  const set: Record<string, string> = {};
  for (const [k, val] of Object.entries(env)) if (val !== undefined && val !== '') set[k] = val;
  const parsed = envSchema.safeParse(set);
  if (parsed.success) return parsed.data;
  const { field, message } = firstProblem(parsed.error);
  throw new Error(`${field} ${message}`);
}

/**
 * The connection settings of the selected profile with the environment's
 * overrides. A file or profile that is named but missing, or a TLS file that
 * does not exist, is an error naming it: never a silent fall back to the
 * local dev server.
 */
function temporalProfile(env: NodeJS.ProcessEnv): { address: string | null; namespace: string; connection: TemporalConnection } {
  // Empty variables count as unset, as everywhere else in this file.
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') vars[k] = v;
  const file = vars.TEMPORAL_CONFIG_FILE;
  const profile = vars.TEMPORAL_PROFILE;
  const source =
    !profile && !file && vars.TEMPORAL_ADDRESS
      ? 'TEMPORAL_ADDRESS'
      : `${profile ? `profile "${profile}"` : 'the default profile'} of ${file ?? 'the temporal CLI config file (~/.config/temporalio/temporal.toml)'}`;
  if (file && !existsSync(file)) throw new Error(`TEMPORAL_CONFIG_FILE names ${file}, which does not exist`);
  let loaded: ReturnType<typeof toClientOptions>;
  let metadata: Record<string, string> | undefined;
  try {
    const p = loadClientConfigProfile({ overrideEnvVars: vars });
    metadata = p.grpcMeta;
    // Reads the TLS files now: a missing one stops the process before it starts anything.
    loaded = toClientOptions(p);
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { path?: string };
    if (e.code === 'ENOENT') throw new Error(`Temporal connection (${source}): the TLS file ${e.path ?? ''} does not exist`);
    throw new Error(`Temporal connection (${source}): ${e.message}`);
  }
  const { address, apiKey, tls } = loaded.connectionOptions;
  return {
    address: address || null,
    namespace: loaded.namespace || 'default',
    connection: {
      ...(tls !== undefined ? { tls } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
      source,
    },
  };
}

/** OTel's rule: the per-signal endpoint as is, the general one with /v1/traces appended. */
function tracing(env: NodeJS.ProcessEnv): TracingConfig | null {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces) return { endpoint: traces };
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (base) return { endpoint: `${base.replace(/\/+$/, '')}/v1/traces` };
  return null;
}

/** AGENT_LEDGER_URL (postgres://…) or the folder LEDGER_DIR: one of the two, never both. */
export function ledgerFromEnv(env: NodeJS.ProcessEnv): LedgerConfig {
  const url = env.AGENT_LEDGER_URL;
  if (!url) return { kind: 'folder', dir: resolve(env.LEDGER_DIR || resolve(workspaceFromEnv(env), '.ledger')) };
  if (env.LEDGER_DIR) throw new Error('AGENT_LEDGER_URL and LEDGER_DIR are both set: the ledger is one store, set one of them');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`AGENT_LEDGER_URL is not a URL: ${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//…@'))}`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`AGENT_LEDGER_URL must be a postgres:// URL (or unset for the folder LEDGER_DIR), got ${parsed.protocol}//…`);
  }
  if (parsed.pathname.length <= 1) throw new Error('AGENT_LEDGER_URL names no database: give the ledger its own, e.g. postgres://user:pass@host:5432/agent_ledger');
  return { kind: 'postgres', url };
}

export function retentionFromEnv(v: CheckedEnv): RetentionConfig {
  return {
    enabled: (v.AGENT_RETENTION ?? 'on') === 'on',
    maxAgeMs: v.AGENT_RETENTION_MAX_AGE_MS ?? null,
    ledgerMaxBytes: v.AGENT_LEDGER_MAX_BYTES ?? null,
    traceMaxBytes: v.AGENT_TRACE_MAX_BYTES ?? null,
    messageStoreMaxBytes: v.AGENT_MESSAGE_STORE_MAX_BYTES ?? null,
    intervalMs: v.AGENT_RETENTION_INTERVAL_MS ?? 3_600_000,
    logEveryPass: v.AGENT_RETENTION_LOG === 'passes',
  };
}

/** A comma-separated variable as a list (entries trimmed, empty ones dropped); null when unset or blank. */
export function list(raw: string | undefined): string[] | null {
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

/**
 * AGENT_MODEL_PRICES: JSON read with the schema of the option `modelPrices`
 * (./settings), so the two take the same prices (promptCount included);
 * anything else stops the process naming the variable and the field.
 */
export function modelPricesFromEnv(raw: string | undefined): Record<string, Pricing> {
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('AGENT_MODEL_PRICES must be JSON like {"gpt-4o-mini": {"inputPerMTokUsd": 0.15, "outputPerMTokUsd": 0.6}}');
  }
  const checked = modelPricesSchema.safeParse(parsed);
  if (checked.success) return checked.data;
  const { field, message } = firstProblem(checked.error);
  throw new Error(field ? `AGENT_MODEL_PRICES ${field} ${message}` : `AGENT_MODEL_PRICES ${message}`);
}

function cacheSize(n: number | undefined): number | undefined {
  if (n === 0) throw new Error(ZERO_CACHE_REFUSED);
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

/**
 * What Connection.connect and NativeConnection.connect both take to reach
 * `address`: the profile's TLS, API key and gRPC headers when it is the
 * configured address; the embedded dev server (no address configured) is plain.
 */
export function temporalConnectOptions(cfg: Pick<ProcessConfig, 'temporalAddress' | 'temporalConnection'>, address: string): { address: string; tls?: TemporalTls | boolean | null; apiKey?: string; metadata?: Record<string, string> } {
  if (!cfg.temporalAddress) return { address };
  const { tls, apiKey, metadata } = cfg.temporalConnection;
  return { address, ...(tls !== undefined ? { tls } : {}), ...(apiKey !== undefined ? { apiKey } : {}), ...(metadata !== undefined ? { metadata } : {}) };
}

/** A true/false variable: unset or empty is false; anything but true/false/1/0 stops the process naming it. */
function booleanSetting(name: string, value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  if (/^(true|1)$/i.test(value)) return true;
  if (/^(false|0)$/i.test(value)) return false;
  throw new Error(`${name} must be true or false, got ${JSON.stringify(value)}`);
}
