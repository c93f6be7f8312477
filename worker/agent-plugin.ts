// AgentPlugin: the harness as a Temporal worker plugin. One line in
// Worker.create({ plugins: [...] }) adds what the `agentRun` workflow needs
// to a worker that also runs the team's own workflows and activities: the
// model and tool activities, the payload codec, the trace and Stop sinks, and
// the OpenTelemetry interceptors when tracing is set. The same plugin in
// `new Client({ plugins: [...] })` gives the client the codec. The standalone
// worker (`npm run worker`) is this plugin configured from the environment.
//
// What it checks before the worker polls, in this order, each failure one
// error and nothing left open: its options, the worker's options that would
// clash (an activity or sink of the harness's names, a cache of 0), the
// team's tools, the namespace's search attributes, the MCP servers, the
// other workers of the queue, the effect ledger.
import type { PayloadKey } from '../node/payload-keys.js';
import { SimplePlugin } from '@temporalio/plugin';
import type { ClientOptions, ClientPlugin } from '@temporalio/client';
import { NativeConnection, type BundleOptions, type BundlerPlugin, type ReplayWorkerOptions, type Worker, type WorkerInterceptors, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } from '@temporalio/interceptors-opentelemetry';
import { createActivities } from '../activities/index.js';
import { MessageStore } from '../activities/message-store.js';
import { RunningCalls } from '../activities/running-calls.js';
import { TraceWriter } from '../activities/trace-file.js';
import type { EffectStore } from '../activities/effects/record.js';
import { Toolset } from '../activities/tools/toolset.js';
import { isSubAgent, type ToolDefinition } from '../activities/tools/define-tool.js';
import { parseMcpConfig, readMcpConfig, type McpServerConfig } from '../activities/tools/mcp/config.js';
import { loadMcpTools, type McpToolSource } from '../activities/tools/mcp/source.js';
import type { AgentActivities } from '../common/activity-contract.js';
import { codecPlugin, encryptsPayloads, withHarnessCodec } from '../node/codec-plugin.js';
import { SHARED_MODULES_PATH, WORKFLOW_INTERCEPTOR_MODULES } from './workflows-path.js';
import { isEffectStore, resolveOptions, type AgentPluginOptions, type PluginTracing, type ResolvedPluginOptions } from './plugin-options.js';
import { requireSearchAttributes } from './search-attribute-check.js';
import { OPTION_NAMES, type SettingNames } from './setting-names.js';
import { pluginEnvironment } from './plugin-env.js';
import { assertTemporalVersions, workerSdkPackages } from '../node/temporal-versions.js';
import type { ApproverPolicy } from '../common/signed-decision.js';
import { HARNESS_SINK_NAMES, harnessSinks, NO_WORKFLOW_SPANS, REPLAY_SINKS, workflowSpanSink } from './sinks.js';
import { openLedger, startRetention } from './storage.js';
import { chooseTaskQueue, toolsetHash, workerIdentity, type PollerVersion } from './tool-routing.js';
import { buildToolset } from './toolset.js';

/** The activity names the harness registers (a team activity of one of these names would be replaced). */
const ACTIVITY_NAMES = Object.keys({
  resolveConfig: true,
  callModel: true,
  runTool: true,
  loadRun: true,
  loadForkSource: true,
  notifyParked: true,
} satisfies Record<keyof AgentActivities, true>);

/**
 * What the harness's own tests and experiments install into a worker, never a
 * plugin option: faults (a worker killed mid-write) and holds (a write held
 * until a Stop) are tool wrappers of test/helpers/faults.ts, so shipped code
 * carries no switch that kills or stalls it.
 * @internal
 */
export interface PluginSeams {
  /** Wraps each activity tool the worker offers (after the checks: names and specs unchanged). */
  wrapTool?: (def: ToolDefinition) => ToolDefinition;
  /** Wraps the harness's activities: experiments/ sets a run's experiment settings in its resolved configuration (test/helpers/experiments.ts). */
  wrapActivities?: (activities: AgentActivities) => AgentActivities;
}

/** The seams installed in a plugin: held beside it, not in it, so neither its options nor its signature carry them. */
const SEAMS = new WeakMap<AgentPlugin, PluginSeams>();

/** Installs the harness's own test seams in a plugin before it configures a worker (worker/create-worker.ts); not exported by the package. */
export function installSeams(plugin: AgentPlugin, seams: PluginSeams): AgentPlugin {
  SEAMS.set(plugin, seams);
  return plugin;
}

/** What a configured worker offers, for its start-up line. */
export interface AgentWorkerSummary {
  /** The queue it polls (Worker.create's, or the one `ownQueue` chose). */
  taskQueue: string;
  /** The tools it offers, by name. */
  toolNames: string[];
  /** The tool-set hash its identity carries (`tools:1a2b3c4d`). */
  toolsetHash: string;
  /** `fs(4 tools)` per MCP server. */
  mcpServers: string[];
  /** Where the effect ledger is. */
  ledger: string;
}

/** What configureWorker opened, closed when the worker stops (or by close()). */
interface Prepared {
  toolset: Toolset;
  taskQueue: string;
  effects: EffectStore;
  activities: AgentActivities;
  trace: TraceWriter;
  calls: RunningCalls;
  mcp: McpToolSource | null;
  connection: NativeConnection;
  namespace: string;
  /** Closes what this plugin opened, last opened first. */
  closers: (() => Promise<void>)[];
}

/**
 * The harness as a Temporal worker (and client) plugin.
 *
 * ```ts
 * // An ESM project (the package is ESM only): no require.resolve, and the workflows module's .js name.
 * const worker = await Worker.create({
 *   connection, taskQueue: 'support', workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
 *   activities: { ...teamActivities },
 *   plugins: [new AgentPlugin({ model: { baseUrl, apiKey }, workspace: '/srv/agent', tools: [lookupOrder] })],
 * });
 * ```
 *
 * One plugin serves one worker: it opens the worker's MCP connections and
 * effect ledger before the worker polls and closes them when `worker.run()`
 * ends. A worker that is created but never run, or a Worker.create that
 * fails after this plugin configured it (its workflow bundle does not
 * build), leaves them to {@link AgentPlugin.close}.
 */
export class AgentPlugin implements WorkerPlugin, ClientPlugin, BundlerPlugin {
  /** The plugin's name, as Temporal's plugin list shows it. */
  readonly name = 'AgentPlugin';
  /** The SDK's merging of options (codec, interceptors), as its own plugins do it; what needs I/O first is this class's. */
  private readonly simple: SimplePlugin;
  /** The same for a worker and a replayer, whose codec refuses what it cannot decode instead of throwing. */
  private readonly workerSimple: SimplePlugin;
  private readonly opts: ResolvedPluginOptions;
  private readonly names: SettingNames;
  /** The MCP servers' config, read and checked when the plugin is made (connected when a worker is configured). */
  private readonly mcpServers: McpServerConfig[];
  private prepared: Prepared | null = null;
  private used = false;
  /** Listed variables set in the environment that this team's worker does not read: said once, when it configures a worker. */
  private readonly envWarning: string | null = null;

  /**
   * Checks the options now, and reads the MCP config: a wrong type, an
   * unknown option or a bad MCP config throws one line naming it.
   * @param names - internal: the words refusals use (the standalone worker names its environment variables)
   */
  constructor(options: AgentPluginOptions, names: SettingNames = OPTION_NAMES) {
    // An @temporalio version outside the peer range: one line now, not a worker that says ready and fails every task.
    assertTemporalVersions(workerSdkPackages());
    const opts = resolveOptions(options, names);
    if (names === OPTION_NAMES) {
      // A team's worker: the variables docs/plugin.md lists beside the options
      // are read (those that guard decisions) or named in a warning, never
      // ignored in silence (./plugin-env.ts). The standalone worker read the
      // environment already, and names its variables.
      const env = pluginEnvironment(options, process.env);
      opts.runDefaults = {
        ...opts.runDefaults,
        ...(env.approvers ? { approvers: env.approvers } : {}),
        ...(env.requireArgsHash ? { requireArgsHash: env.requireArgsHash } : {}),
      };
      if (env.builtinTools !== undefined) opts.builtinTools = env.builtinTools;
      this.names = env.names;
      this.envWarning = env.warning;
    } else {
      this.names = names;
    }
    this.opts = opts;
    this.mcpServers = this.opts.mcp ? mcpConfigs(this.opts.mcp, names) : [];
    const keys = this.opts.payloadKeys === undefined ? {} : { payloadKeys: this.opts.payloadKeys };
    this.simple = new SimplePlugin({
      name: this.name,
      dataConverter: (existing) => withHarnessCodec(existing, keys),
      ...(this.opts.tracing ? { workerInterceptors: tracingInterceptors() } : {}),
    });
    // A worker (and a replayer, so a replay sees what the run saw) turns a
    // workflow's undecodable payload into a marker the run refuses, where a
    // client throws: see UndecodablePolicy in node/payload-codec.ts.
    this.workerSimple = new SimplePlugin({
      name: this.name,
      dataConverter: (existing) => withHarnessCodec(existing, { ...keys, undecodable: 'refuse' }),
      ...(this.opts.tracing ? { workerInterceptors: tracingInterceptors() } : {}),
    });
  }

  /**
   * The codec alone, for a Client in a process that runs no worker:
   * `new Client({ connection, plugins: [AgentPlugin.forClient()] })`.
   */
  static forClient(opts: { payloadKeys?: readonly PayloadKey[] | null } = {}): ClientPlugin {
    return codecPlugin(opts);
  }

  /** A client that talks to these runs needs the codec (large payloads are compressed). */
  configureClient(options: ClientOptions): ClientOptions {
    return this.simple.configureClient(options);
  }

  /**
   * bundleWorkflowCode({ plugins: [agentPlugin] }) adds the tracing interceptor
   * modules when the plugin traces, and preloads the stateless libraries the
   * loop uses (workflows/shared-modules.ts).
   */
  configureBundler(options: BundleOptions): BundleOptions {
    return this.simple.configureBundler({ ...options, preloadModules: withSharedModules(options.preloadModules) });
  }

  /** Adds the harness to the worker's options after checking everything it needs; nothing is left open when it throws. */
  async configureWorker(options: WorkerOptions): Promise<WorkerOptions> {
    if (this.used) throw new Error('AgentPlugin: this plugin already configured a worker; give each Worker.create an AgentPlugin of its own');
    this.used = true;
    if (options.maxCachedWorkflows === 0) throw new Error(this.names.zeroCache);
    if (this.envWarning) this.opts.log.warn(this.envWarning);
    const clash = ACTIVITY_NAMES.filter((n) => Object.hasOwn(options.activities ?? {}, n));
    if (clash.length) throw new Error(`Worker.create's activities include ${clash.join(', ')}, the name${clash.length > 1 ? 's' : ''} of the harness's activities (AgentPlugin adds them): rename the team's`);
    const sinkClash = HARNESS_SINK_NAMES.filter((n) => Object.hasOwn(options.sinks ?? {}, n));
    if (sinkClash.length) throw new Error(`Worker.create's sinks include ${sinkClash.join(', ')}, the name${sinkClash.length > 1 ? 's' : ''} of the harness's workflow sinks (AgentPlugin adds them): rename the team's`);
    const p = await prepare(this.opts, this.mcpServers, options, this.names, SEAMS.get(this) ?? {});
    this.prepared = p;
    const sinks = {
      // A team's own `exporter` (OpenTelemetryPlugin's) stays unless this plugin traces.
      ...NO_WORKFLOW_SPANS,
      ...options.sinks,
      ...(this.opts.tracing ? { exporter: workflowSpanSink(this.opts.tracing) } : {}),
      ...harnessSinks(p.trace, p.calls),
    };
    return this.workerSimple.configureWorker({
      ...options,
      // A worker that bundles at start preloads the libraries every run uses, once per thread (workflows/shared-modules.ts).
      ...(options.workflowsPath !== undefined && options.workflowBundle === undefined
        ? { bundlerOptions: { ...options.bundlerOptions, preloadModules: withSharedModules(options.bundlerOptions?.preloadModules) } }
        : {}),
      taskQueue: p.taskQueue,
      activities: { ...options.activities, ...p.activities },
      sinks,
      // Carries the tool-set hash: a worker about to join this queue reads it (worker/tool-routing.ts).
      identity: options.identity ? `${options.identity} tools:${toolsetHash(p.toolset.names())}` : workerIdentity(p.toolset),
      // At most one heartbeat per interval reaches the server, however often a
      // call reports progress: each one is billed. Cancellation reaches a call
      // in another process through a heartbeat's answer, so the interval
      // bounds that Stop; a call in this process is stopped through the
      // `calls` sink. A team's own setting wins (it applies to its activities too).
      defaultHeartbeatThrottleInterval: options.defaultHeartbeatThrottleInterval ?? this.opts.heartbeatEveryMs,
      maxHeartbeatThrottleInterval: options.maxHeartbeatThrottleInterval ?? this.opts.heartbeatEveryMs,
    });
  }

  /** Replaying histories: the codec, and sinks that do nothing (a replay writes no trace and stops no call). */
  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return this.workerSimple.configureReplayWorker({ ...options, sinks: { ...REPLAY_SINKS, ...options.sinks } });
  }

  /** Runs the retention passes while the worker polls, and closes what the plugin opened once it stops. */
  async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    const p = this.prepared;
    if (!p) return next(worker);
    // Not awaited before polling: its first pass reads the server and the disk.
    const retention = startRetention({
      effects: p.effects,
      connection: p.connection,
      namespace: p.namespace,
      traceDir: this.opts.traceDir,
      messageStoreDir: this.opts.messageStoreDir,
      retention: this.opts.retention,
      log: this.opts.log,
      names: this.names,
    });
    try {
      await next(worker);
    } finally {
      await (await retention)();
      await this.close();
    }
  }

  /** What the configured worker offers; null before Worker.create configured it. */
  summary(): AgentWorkerSummary | null {
    const p = this.prepared;
    if (!p) return null;
    return {
      taskQueue: p.taskQueue,
      toolNames: p.toolset.names(),
      toolsetHash: toolsetHash(p.toolset.names()),
      mcpServers: p.mcp?.servers.map((s) => `${s.name}(${s.mcpTools.length} tools)`) ?? [],
      ledger: p.effects.where,
    };
  }

  /**
   * Closes what the plugin opened for its worker (MCP connections, the effect
   * ledger it opened, its own connection). Called when `worker.run()` ends;
   * call it yourself for a worker never run. Safe to call twice.
   */
  async close(): Promise<void> {
    const p = this.prepared;
    if (!p) return;
    for (const close of p.closers.splice(0).reverse()) await close().catch(() => {});
  }
}

/**
 * A RunActivity span per model call and tool call (local activities too),
 * child of the workflow's StartActivity; the workflow's own spans come from
 * the interceptor modules (bundled only with a workflowsPath, or by
 * bundleWorkflowCode given this plugin).
 */
function tracingInterceptors(): WorkerInterceptors {
  return {
    workflowModules: WORKFLOW_INTERCEPTOR_MODULES,
    activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
  };
}

function withSharedModules(modules: readonly string[] | undefined): string[] {
  return [...new Set([...(modules ?? []), SHARED_MODULES_PATH])];
}

/** The version the worker polls as, for the check of the queue's other workers. */
function pollerVersion(options: WorkerOptions): PollerVersion | null {
  const d = options.workerDeploymentOptions;
  return d?.useWorkerVersioning ? { deploymentName: d.version.deploymentName, buildId: d.version.buildId } : null;
}

function mcpConfigs(mcp: NonNullable<ResolvedPluginOptions['mcp']>, names: SettingNames): McpServerConfig[] {
  if (typeof mcp === 'string') return readMcpConfig(mcp, process.env, names.mcp);
  return parseMcpConfig(mcp, { source: names.mcp, baseDir: process.cwd() });
}

/** Every check and everything opened, in the order that opens nothing before a cheap check could refuse. */
/**
 * Why the approvers policy names a tool this worker does not offer, or null.
 * A tool the policy does not list is decided unsigned, so a misspelt name
 * ("delete_fle") would leave the tool it meant open to anyone's decision:
 * the worker refuses to start rather than run so (docs/security.md).
 */
export function policyToolProblem(policy: ApproverPolicy | undefined, offered: readonly string[], names: SettingNames): string | null {
  const unknown = Object.keys(policy?.tools ?? {}).filter((t) => !offered.includes(t));
  if (unknown.length === 0) return null;
  const listed = unknown.map((t) => JSON.stringify(t)).join(', ');
  return `${names.approvers} lists ${unknown.length > 1 ? 'tools' : 'tool'} ${listed}, which this worker does not offer (it offers: ${offered.join(', ')}): a tool the policy does not name is decided unsigned, so fix the name, or offer the tool (${names.only})`;
}

async function prepare(opts: ResolvedPluginOptions, mcpServers: readonly McpServerConfig[], options: WorkerOptions, names: SettingNames, seams: PluginSeams): Promise<Prepared> {
  const closers: (() => Promise<void>)[] = [];
  try {
    // The team's tools first (no I/O): a bad one is named before anything is asked of the server.
    buildToolset({ tools: opts.tools, only: null, names, builtins: opts.builtinTools });
    let connection = options.connection;
    if (!connection) {
      // Worker.create connects to localhost:7233 when given no connection; the checks need one now.
      const own = await NativeConnection.connect({});
      closers.push(() => own.close());
      connection = own;
    }
    const namespace = options.namespace ?? 'default';
    await requireSearchAttributes(connection, namespace, opts.searchAttributes, names);
    const mcp = mcpServers.length ? await loadMcpTools(mcpServers) : null;
    if (mcp) closers.push(() => mcp.close());
    const offered = buildToolset({ tools: opts.tools, mcpTools: mcp?.tools ?? [], only: opts.only, names, builtins: opts.builtinTools });
    const wrap = seams.wrapTool;
    // The same names and specs (what the workflow and the queue check see); only what runs differs.
    const toolset = wrap ? new Toolset(offered.definitions().map((d) => (isSubAgent(d) ? d : wrap(d)))) : offered;
    const unknown = policyToolProblem(opts.runDefaults.approvers, toolset.names(), names);
    if (unknown) throw new Error(unknown);
    const route = await chooseTaskQueue(connection, {
      namespace,
      named: opts.ownQueue ? null : options.taskQueue,
      toolset,
      versioning: pollerVersion(options),
      check: opts.toolsetCheck,
      names,
    });
    let effects: EffectStore;
    if (isEffectStore(opts.ledger)) effects = opts.ledger;
    else {
      const opened = await openLedger(opts.ledger);
      closers.push(() => opened.close());
      effects = opened;
    }
    // Both carry the namespace: retention of another namespace sharing the folders leaves them alone.
    const trace = new TraceWriter(opts.traceDir, namespace);
    const calls = new RunningCalls();
    const activities = createActivities({
      ...('provider' in opts.model ? { baseUrl: '', provider: opts.model.provider } : { baseUrl: opts.model.baseUrl, apiKey: opts.model.apiKey }),
      model: opts.model.model,
      tokens: opts.tokens,
      liveProgress: opts.liveProgress,
      workspaceRoot: opts.workspaceRoot,
      seedFiles: opts.seedFiles,
      effects,
      messageStore: new MessageStore(opts.messageStoreDir, namespace),
      trace,
      defaults: opts.runDefaults,
      prices: opts.modelPrices,
      toolset,
      calls,
      heartbeatEveryMs: opts.heartbeatEveryMs,
      requireArgsHashSetting: names.requireArgsHash,
      pricesSetting: names.modelPrices,
      payloadsEncrypted: encryptsPayloads(opts.payloadKeys),
      approversSetting: names.approvers,
      notify: opts.notify,
    });
    for (const note of route.notes) opts.log.log(note);
    return { toolset, taskQueue: route.taskQueue, effects, activities: seams.wrapActivities ? seams.wrapActivities(activities) : activities, trace, calls, mcp, connection, namespace, closers };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => {});
    throw err;
  }
}

export type { AgentPluginOptions, PluginTracing };
