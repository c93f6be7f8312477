// `npm run worker`: one worker process on the task queue. Connects to the
// configured Temporal (TEMPORAL_ADDRESS, or a profile of the temporal CLI's
// config file: TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE), or to the embedded
// dev server (started if not running). Exports spans when
// OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set. The worker is an
// AgentPlugin configured from the environment (worker/create-worker.ts), so it
// runs the checks a team's worker runs, naming the variables.
// Whatever stops it before it runs (a bad setting, a busy port, no server) is
// one line naming it, and whatever it had started is stopped first.
import { NativeConnection } from '@temporalio/worker';
import { startDevServer, type DevServer } from './dev-server/dev-server.js';
import { temporalConnectOptions } from '../node/config.js';
import { startTracing, stopTracing } from '../node/tracing.js';
import { createWorkerWith, workerProcessOptions } from './create-worker.js';
import { standalonePlugin, standaloneWorkerConfig, type StandaloneWorkerConfig } from './env-options.js';
import type { AgentPlugin } from './agent-plugin.js';
import { toolsOfModules } from './toolset.js';
import { installRuntime } from './telemetry.js';
import { workerNotCreated } from './startup-errors.js';
import { cannotReach, errorLine } from '../node/connection-errors.js';

let server: DevServer | null = null;
let plugin: AgentPlugin | null = null;
let running = false;

/** Stops what this process started, says why in one line, and exits. */
async function notStarted(reason: string, code = 1): Promise<never> {
  if (reason) console.error(`worker not started: ${reason}`);
  await plugin?.close().catch(() => {});
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

// The environment read into AgentPlugin's options and the process's own settings (./env-options.ts).
let config: StandaloneWorkerConfig;
try {
  config = standaloneWorkerConfig();
} catch (err) {
  // Nothing started yet.
  console.error(`worker not started: ${errorLine(err)}`);
  process.exit(1);
}
// The tool modules first, and the plugin's check of every setting (the MCP
// config read): a module or a config that names what does not exist stops the
// worker with the reason before it connects.
const { process: cfg, plugin: options, modelAt } = config;
const tools = await toolsOfModules(cfg.toolModules).catch((err: unknown) => notStarted(errorLine(err)));
const tracing = startTracing(cfg.tracing, 'agent-harness-worker');
plugin = await Promise.resolve()
  .then(() => standalonePlugin(options, tools, tracing))
  .catch((err: unknown) => notStarted(errorLine(err)));
const watch = await Promise.resolve()
  .then(() => installRuntime({ logLevel: 'INFO', metricsAddress: cfg.metricsAddress }))
  .catch((err: unknown) => notStarted(errorLine(err)));
server = cfg.temporalAddress
  ? null
  : await startDevServer({ port: cfg.devServer.port, uiPort: cfg.devServer.uiPort, dbFile: cfg.devServer.dbFile }).catch((err: unknown) => notStarted(errorLine(err)));
const address = cfg.temporalAddress ?? server?.address ?? '';
const source = cfg.temporalAddress ? cfg.temporalConnection.source : 'TEMPORAL_DEV_PORT';

const connection = await NativeConnection.connect(temporalConnectOptions(cfg, address)).catch((err: unknown) => notStarted(cannotReach(address, source, err)));
// Worker.create runs the plugin's checks before the worker polls. The runs
// upsert the Agent* search attributes: a namespace without them would fail
// every run's first workflow task forever, so the worker stops now
// (worker/search-attribute-check.ts). And runs go only where their tools are:
// a tool set other than the built-in one polls a queue of its own unless
// AGENT_TASK_QUEUE names one, and a worker never joins a queue whose other
// workers offer other tools (worker/tool-routing.ts). The MCP servers are
// connected, and the effect ledger opened and read once (a database it cannot
// reach is one line).
const worker = await createWorkerWith({ ...workerProcessOptions(cfg), connection }, plugin).catch((err: unknown) => notStarted(workerNotCreated(err, cfg.workflowBundlePath)));
const offered = plugin.summary();
const mcp = offered?.mcpServers.join(' ');
console.log(`worker on ${address}${cfg.temporalAddress ? ` (${cfg.temporalConnection.source})` : ''} namespace=${cfg.namespace} ledger=${offered?.ledger} taskQueue=${offered?.taskQueue} tools=${offered?.toolsetHash} model endpoint=${modelAt}${cfg.versioning ? ` deployment=${cfg.versioning.deploymentName} build=${cfg.versioning.buildId} (${cfg.versioning.defaultBehavior})` : ''}${cfg.metricsAddress ? ` metrics http://${cfg.metricsAddress}/metrics` : ''}${tracing ? ` traces ${tracing.endpoint}` : ''}${mcp ? ` mcp ${mcp}` : ''}`);
// An outage from here on is one line when it starts and one when it ends.
watch.watch(connection, address);
running = true;
// worker.run() resolves after SIGINT/SIGTERM (the SDK installs those handlers);
// the plugin closes the MCP connections (stdio servers are stopped, HTTP
// sessions ended) and the ledger as it returns.
try {
  await worker.run();
} catch (err) {
  console.error(`worker stopped: ${errorLine(err)}`);
  process.exitCode = 1;
} finally {
  watch.stop();
}
await connection.close();
await stopTracing();
await server?.stop();
