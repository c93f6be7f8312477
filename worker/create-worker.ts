// Builds a worker for the `agentRun` workflow: its activities, the trace sink,
// the sink that stops a run's calls running in this process, and heartbeats
// throttled to the interval the bill allows (common/heartbeat.ts). Used by
// `npm run worker`, `npm start` and the tests alike.
import { NativeConnection, Worker, type InjectedSink, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetrySinks,
  type OpenTelemetryWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { fileURLToPath } from 'node:url';
import { RUN_ID_ATTRIBUTE, type Tracing } from '../common/tracing.js';
import { createActivities } from '../activities/index.js';
import { dataConverter } from '../common/payload-codec.js';
import type { PayloadKey } from '../common/payload-keys.js';
import { MessageStore } from '../activities/message-store.js';
import { TraceWriter } from '../activities/trace-file.js';
import { join } from 'node:path';
import type { TraceSinks } from '../workflows/trace.js';
import type { CallStopSinks } from '../workflows/stop-here.js';
import { RunningCalls } from '../activities/running-calls.js';
import { DEFAULT_HEARTBEAT_MS } from '../common/heartbeat.js';
import type { Pricing, RunDefaults } from '../common/contract.js';
import type { WriteHooks } from '../activities/tools/context.js';
import type { EffectStore } from '../activities/effects/record.js';
import { Toolset } from '../activities/tools/toolset.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { workerIdentity } from './tool-routing.js';
import type { WorkerTools } from './toolset.js';
import { ZERO_CACHE_REFUSED, type HarnessConfig, type WorkerVersioning } from '../common/config.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/**
 * Bundled with the workflows only when tracing is on: they cost every
 * activation some work in the sandbox, and a loop that is not traced should
 * not pay it. They add no command, so runs recorded with and without them
 * replay on either bundle. A WORKFLOW_BUNDLE_PATH bundle is used as built:
 * build it with these modules (bundleWorkflowCode's workflowInterceptorModules)
 * to get workflow spans from it.
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [fileURLToPath(new URL('../workflows/tracing-interceptors.ts', import.meta.url))];

export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  llmBaseUrl: string;
  llmApiKey?: string;
  /** Overrides the model name of every run (LLM_MODEL). */
  llmModel?: string;
  workspaceRoot: string;
  /** The effect ledger of write tools (default: a folder store in workspaceRoot/.ledger). */
  effects?: EffectStore;
  /** Default: workspaceRoot/.messages. */
  messageStoreDir?: string;
  traceDir: string;
  /** A pre-built bundle (tests build it once); otherwise workflows/ is bundled now. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** At least 1 (see ZERO_CACHE_REFUSED); undefined: the SDK's default. */
  maxCachedWorkflows?: number;
  /** How long a run's next task waits for the worker that caches it before any worker may take it. SDK default: 10 s. */
  stickyTimeoutMs?: number;
  /** Test seams inside write tools (see activities/tools/context.ts). */
  writeHooks?: WriteHooks;
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
  /** The tools offered (default: the built-ins). */
  toolset?: Toolset;
  /** A Worker Deployment version to poll as; unset: an unversioned worker. */
  versioning?: WorkerVersioning | null;
  /** OpenTelemetry spans for the workflow and its activities (common/tracing.ts), or null/unset: none exported. */
  tracing?: Tracing | null;
  /** How often a running model or tool call heartbeats (AGENT_HEARTBEAT_MS; default common/heartbeat.ts). */
  heartbeatEveryMs?: number;
  /** Payload encryption keys as values (first encrypts); absent: AGENT_PAYLOAD_KEYS; null: none. */
  payloadKeys?: readonly PayloadKey[] | null;
}

/**
 * A worker configured from the environment (common/config.ts), as `npm run
 * worker` and `npm start` run it. `tools` comes from loadWorkerTools(cfg),
 * loaded first so a bad tool source stops the process before it connects, and
 * `effects` from startWorkerStorage (worker/storage.ts); the caller closes
 * both once the worker has stopped.
 */
export async function createWorkerFromConfig(
  connection: NativeConnection,
  cfg: HarnessConfig,
  tools: WorkerTools,
  effects: EffectStore,
  tracing: Tracing | null = null,
): Promise<Worker> {
  return createAgentWorker({
    tracing,
    toolset: tools.toolset,
    connection,
    namespace: cfg.namespace,
    taskQueue: cfg.taskQueue,
    llmBaseUrl: cfg.llmBaseUrl,
    llmApiKey: cfg.llmApiKey,
    llmModel: cfg.llmModel,
    workspaceRoot: cfg.workspaceRoot,
    effects,
    messageStoreDir: cfg.messageStoreDir,
    traceDir: cfg.traceDir,
    workflowBundle: cfg.workflowBundlePath ? { codePath: cfg.workflowBundlePath } : undefined,
    maxCachedWorkflows: cfg.maxCachedWorkflows,
    stickyTimeoutMs: cfg.stickyTimeoutMs,
    runDefaults: cfg.runDefaults,
    modelPrices: cfg.modelPrices,
    versioning: cfg.versioning,
    heartbeatEveryMs: cfg.heartbeatEveryMs,
  });
}

export async function createAgentWorker(opts: AgentWorkerOptions): Promise<Worker> {
  if (opts.maxCachedWorkflows === 0) throw new Error(ZERO_CACHE_REFUSED);
  const trace = new TraceWriter(opts.traceDir);
  const calls = new RunningCalls();
  const toolset = opts.toolset ?? new Toolset(BUILTIN_TOOLS);
  const heartbeatMs = opts.heartbeatEveryMs ?? DEFAULT_HEARTBEAT_MS;
  const sinks: InjectedSinks<TraceSinks & CallStopSinks & OpenTelemetrySinks> = {
    exporter: opts.tracing ? workflowSpanSink(opts.tracing) : NO_WORKFLOW_SPANS.exporter,
    trace: {
      event: {
        // Called during replay too, but then it only fills a line that is
        // missing. Replayed events are normally on disk already; yet Temporal's
        // core can flag as "replaying" an activation this worker never ran
        // before (the local activity's result in a workflow task retried after
        // a timeout), and that line would otherwise be lost for good.
        fn: (info, event, chainId) => void trace.write(info.workflowId, chainId ?? info.firstExecutionRunId, event, { onlyIfMissing: info.unsafe.isReplayingHistoryEvents }),
        callDuringReplay: true,
      },
    },
    // A Stop taken by a loop in this process aborts its calls running here at
    // once. Never on replay: then the calls it stopped are long gone.
    calls: {
      stop: { fn: (info, reason) => void calls.stopRun(info.workflowId, info.runId, reason), callDuringReplay: false },
    },
  };
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue,
    ...(opts.activitiesOnly ? {} : opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    interceptors: {
      ...(opts.tracing && !opts.workflowBundle ? { workflowModules: WORKFLOW_INTERCEPTOR_MODULES } : {}),
      // A RunActivity span per model call and tool call (local activities too), child of the workflow's StartActivity.
      ...(opts.tracing
        ? { activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })] }
        : {}),
    },
    activities: createActivities({
      baseUrl: opts.llmBaseUrl,
      apiKey: opts.llmApiKey,
      model: opts.llmModel,
      workspaceRoot: opts.workspaceRoot,
      effects: opts.effects,
      messageStore: new MessageStore(opts.messageStoreDir ?? join(opts.workspaceRoot, '.messages')),
      trace,
      defaults: opts.runDefaults,
      prices: opts.modelPrices,
      writeHooks: opts.writeHooks,
      toolset,
      calls,
      heartbeatEveryMs: heartbeatMs,
    }),
    sinks,
    // Carries the tool-set hash: a worker about to join this queue reads it (worker/tool-routing.ts).
    identity: workerIdentity(toolset),
    ...(opts.loopOnly ? { enableNonLocalActivities: false } : {}),
    ...(opts.versioning ? { workerDeploymentOptions: deploymentOptions(opts.versioning) } : {}),
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
    ...(opts.stickyTimeoutMs !== undefined ? { stickyQueueScheduleToStartTimeout: opts.stickyTimeoutMs } : {}),
    ...(opts.shutdownGraceTimeMs !== undefined ? { shutdownGraceTime: opts.shutdownGraceTimeMs } : {}),
    // Compresses the large, transcript-carrying payloads; small ones stay plain JSON. With keys, encrypts them all.
    dataConverter: dataConverter(opts.payloadKeys === undefined ? {} : { payloadKeys: opts.payloadKeys }),
    // At most one heartbeat per interval reaches the server, however often a
    // tool reports progress: each one is billed. Cancellation reaches a call in
    // another process through a heartbeat's answer, so the interval bounds that
    // Stop; a call in this process is stopped through the `calls` sink.
    defaultHeartbeatThrottleInterval: heartbeatMs,
    maxHeartbeatThrottleInterval: heartbeatMs,
  });
}

/** The `exporter` sink of a bundle whose tracing interceptors have nowhere to send spans (tracing off; replay). */
export const NO_WORKFLOW_SPANS: InjectedSinks<OpenTelemetrySinks> = { exporter: { export: { fn: () => {} } } };

/** Every sink the workflows call, doing nothing: for replaying histories (a replay never writes a trace or stops a call). */
export const REPLAY_SINKS: InjectedSinks<TraceSinks & CallStopSinks & OpenTelemetrySinks> = {
  ...NO_WORKFLOW_SPANS,
  trace: { event: { fn: () => {} } },
  calls: { stop: { fn: () => {} } },
};

/**
 * The package's sink for the workflow's spans, which also puts the run's id
 * under the attribute the client's and the activities' spans carry it in
 * (the package sets only `workflowId`, among all of WorkflowInfo, on these).
 */
function workflowSpanSink(tracing: Tracing): InjectedSink<OpenTelemetryWorkflowExporter> {
  // The package copies all of WorkflowInfo onto each span; the nested parts
  // (memo, search attributes, retry policy...) are dropped: they can be large
  // and say nothing the scalar ones (workflowId, runId, taskQueue, attempt,
  // historyLength...) do not.
  const scalarsOnly: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => {
      for (const [k, v] of Object.entries(span.attributes)) if (typeof v === 'object' && v !== null && !Array.isArray(v)) delete span.attributes[k];
      tracing.spanProcessor.onEnd(span);
    },
    forceFlush: () => tracing.spanProcessor.forceFlush(),
    shutdown: async () => {},
  };
  const sink = makeWorkflowExporter(scalarsOnly, tracing.resource);
  return {
    export: {
      fn: (info, spans) => {
        for (const span of spans) span.attributes[RUN_ID_ATTRIBUTE] = info.workflowId;
        void sink.export.fn(info, spans);
      },
    },
  };
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
