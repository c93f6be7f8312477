// `npm run worker`: one worker process on the task queue. Connects to the
// configured Temporal (TEMPORAL_ADDRESS, or a profile of the temporal CLI's
// config file: TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE), or to the embedded
// dev server (started if not running). Exports spans when
// OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set.
// Whatever stops it before it runs (a bad setting, a busy port, no server) is
// one line naming it, and whatever it had started is stopped first.
import { NativeConnection } from '@temporalio/worker';
import { Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from './dev-server/dev-server.js';
import { loadConfig, temporalConnectOptions, type HarnessConfig } from '../common/config.js';
import { startTracing, stopTracing } from '../common/tracing.js';
import { createWorkerFromConfig } from './create-worker.js';
import { startWorkerStorage } from './storage.js';
import { loadWorkerTools, type WorkerTools } from './toolset.js';
import { installRuntime } from './telemetry.js';
import { startupRefusal, workerNotCreated } from './startup-errors.js';
import { requireSearchAttributes } from './search-attribute-check.js';
import { chooseTaskQueue, toolsetHash } from './tool-routing.js';
import { cannotReach, errorLine } from '../common/connection-errors.js';

let server: DevServer | null = null;
let tools: WorkerTools | null = null;
let running = false;

/** Stops what this process started, says why in one line, and exits. */
async function notStarted(reason: string, code = 1): Promise<never> {
  if (reason) console.error(`worker not started: ${reason}`);
  await tools?.close().catch(() => {});
  await server?.stop();
  process.exit(code);
}

// Once the worker runs, the SDK turns these signals into a graceful shutdown;
// before that, nothing would stop what this process has started.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (!running) void notStarted('', signal === 'SIGINT' ? 130 : 143);
  });
}

let cfg: HarnessConfig;
try {
  cfg = loadConfig();
} catch (err) {
  // Nothing started yet.
  console.error(`worker not started: ${errorLine(err)}`);
  process.exit(1);
}
// The tools first: an MCP server that does not start, or a tool source that
// names what does not exist, stops the worker with the reason before it connects.
tools = await loadWorkerTools(cfg).catch((err: unknown) => notStarted(errorLine(err)));
const watch = await Promise.resolve()
  .then(() => installRuntime({ logLevel: 'INFO', metricsAddress: cfg.metricsAddress }))
  .catch((err: unknown) => notStarted(errorLine(err)));
server = cfg.temporalAddress
  ? null
  : await startDevServer({ port: cfg.devServer.port, uiPort: cfg.devServer.uiPort, dbFile: cfg.devServer.dbFile }).catch((err: unknown) => notStarted(errorLine(err)));
const address = cfg.temporalAddress ?? server?.address ?? '';
const source = cfg.temporalAddress ? cfg.temporalConnection.source : 'TEMPORAL_DEV_PORT';

// The worker's own connection first: it fails at once when nothing listens,
// where the client's would wait out its connect timeout.
const connectOptions = temporalConnectOptions(cfg, address);
const connection = await NativeConnection.connect(connectOptions).catch((err: unknown) => notStarted(cannotReach(address, source, err)));
const admin = await Connection.connect({ ...connectOptions, connectTimeout: 10_000 }).catch((err: unknown) => notStarted(cannotReach(address, source, err)));
// The runs upsert the Agent* search attributes: a namespace without them would
// fail every run's first workflow task forever, so the worker stops now
// (worker/search-attribute-check.ts). And runs go only where their tools are:
// a tool set other than the built-in one polls a queue of its own unless
// AGENT_TASK_QUEUE names one, and a worker never joins a queue whose other
// workers offer other tools (worker/tool-routing.ts).
const routing = await (async () => {
  await requireSearchAttributes(admin, cfg.namespace, cfg.searchAttributes);
  const route = await chooseTaskQueue(admin, { namespace: cfg.namespace, named: cfg.taskQueueNamed ? cfg.taskQueue : null, toolset: tools.toolset, versioning: cfg.versioning, check: cfg.toolsetCheck });
  cfg.taskQueue = route.taskQueue;
  return route.notes;
})().catch((err: unknown) => notStarted(startupRefusal(err)));
await admin.close();

const tracing = startTracing(cfg.tracing, 'agent-harness-worker');
// Opened after the connection (its retention asks the server about runs); a database it cannot reach is one line.
const storage = await startWorkerStorage(cfg, connection).catch((err: unknown) => notStarted(errorLine(err)));
const worker = await createWorkerFromConfig(connection, cfg, tools, storage.effects, tracing).catch((err: unknown) => notStarted(workerNotCreated(err, cfg.workflowBundlePath)));
const mcp = tools.mcp?.servers.map((s) => `${s.name}(${s.mcpTools.length} tools)`).join(' ');
for (const line of routing) console.log(line);
console.log(`worker on ${address}${cfg.temporalAddress ? ` (${cfg.temporalConnection.source})` : ''} namespace=${cfg.namespace} ledger=${storage.effects.where} taskQueue=${cfg.taskQueue} tools=${toolsetHash(tools.toolset.names())} model endpoint=${cfg.llmBaseUrl}${cfg.versioning ? ` deployment=${cfg.versioning.deploymentName} build=${cfg.versioning.buildId} (${cfg.versioning.defaultBehavior})` : ''}${cfg.metricsAddress ? ` metrics http://${cfg.metricsAddress}/metrics` : ''}${tracing ? ` traces ${tracing.endpoint}` : ''}${mcp ? ` mcp ${mcp}` : ''}`);
// An outage from here on is one line when it starts and one when it ends.
watch.watch(connection, address);
running = true;
// worker.run() resolves after SIGINT/SIGTERM (the SDK installs those handlers).
try {
  await worker.run();
} catch (err) {
  console.error(`worker stopped: ${errorLine(err)}`);
  process.exitCode = 1;
} finally {
  watch.stop();
  // The MCP connections end with the worker: stdio servers are stopped, HTTP sessions ended.
  await tools.close();
  await storage.close();
}
await connection.close();
await stopTracing();
await server?.stop();
