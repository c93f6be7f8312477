// `npm run worker`: one worker process on the task queue. Connects to the
// configured Temporal (TEMPORAL_ADDRESS, or a profile of the temporal CLI's
// config file: TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE), or to the embedded
// dev server (started if not running). Exports spans when
// OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set.
import { NativeConnection } from '@temporalio/worker';
import { Connection } from '@temporalio/client';
import { ensureSearchAttributes, startDevServer } from '../server/dev-server';
import { loadConfig, temporalConnectOptions, type HarnessConfig } from '../common/config';
import { startTracing, stopTracing } from '../common/tracing';
import { createWorkerFromConfig } from './create-worker';
import { startWorkerStorage } from './storage';
import { loadWorkerTools, type WorkerTools } from './toolset';
import { installRuntime } from './telemetry';

let cfg: HarnessConfig;
try {
  cfg = loadConfig();
} catch (err) {
  console.error(`worker not started: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
// The tools first: an MCP server that does not start, or a tool source that
// names what does not exist, stops the worker with the reason before it connects.
let tools: WorkerTools;
try {
  tools = await loadWorkerTools(cfg);
} catch (err) {
  console.error(`worker not started: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
installRuntime({ logLevel: 'INFO', metricsAddress: cfg.metricsAddress });
const server = cfg.temporalAddress
  ? null
  : await startDevServer({ port: cfg.devServer.port, uiPort: cfg.devServer.uiPort, dbFile: cfg.devServer.dbFile });
const address = cfg.temporalAddress ?? server?.address ?? '';

// Registering search attributes is idempotent; the workflow upserts them.
const connectOptions = temporalConnectOptions(cfg, address);
const admin = await Connection.connect(connectOptions);
await ensureSearchAttributes(admin, cfg.namespace).catch((err: unknown) =>
  console.warn(`could not register search attributes (${String(err)}); register the Agent* search attributes of workflows/search-attributes.ts yourself`),
);
await admin.close();

const connection = await NativeConnection.connect(connectOptions);
const tracing = startTracing(cfg.tracing, 'agent-harness-worker');
const storage = await startWorkerStorage(cfg, connection);
const worker = await createWorkerFromConfig(connection, cfg, tools, storage.effects, tracing);
const mcp = tools.mcp?.servers.map((s) => `${s.name}(${s.mcpTools.length} tools)`).join(' ');
console.log(`worker on ${address}${cfg.temporalAddress ? ` (${cfg.temporalConnection.source})` : ''} namespace=${cfg.namespace} ledger=${storage.effects.where} taskQueue=${cfg.taskQueue} model endpoint=${cfg.llmBaseUrl}${cfg.versioning ? ` deployment=${cfg.versioning.deploymentName} build=${cfg.versioning.buildId} (${cfg.versioning.defaultBehavior})` : ''}${cfg.metricsAddress ? ` metrics http://${cfg.metricsAddress}/metrics` : ''}${tracing ? ` traces ${tracing.endpoint}` : ''}${mcp ? ` mcp ${mcp}` : ''}`);
// worker.run() resolves after SIGINT/SIGTERM (the SDK installs those handlers).
try {
  await worker.run();
} finally {
  // The MCP connections end with the worker: stdio servers are stopped, HTTP sessions ended.
  await tools.close();
  await storage.close();
}
await connection.close();
await stopTracing();
await server?.stop();
