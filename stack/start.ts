// `npm start`: the whole stack in one command. Uses TEMPORAL_ADDRESS when set,
// otherwise starts (or reuses) the embedded dev server with its SQLite file
// under .data/; starts the scripted provider unless LLM_BASE_URL points
// elsewhere; runs a worker in this process; then runs one agent (the `plan`
// scenario unless flags say otherwise) and follows it to its end.
//   npm start                         one `plan` run
//   npm start -- --model destructive  a run that waits for your approval
//   npm start -- --serve              keep server, provider and worker up
//   npm start -- --real               a real model on this machine (llama-server
//                                     over SmolLM2-135M, provisioned on first use)
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { installRuntime } from '../worker/telemetry';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { startLocalModel, type LocalModel } from '../model/local-model';
import { startProvider, type RunningProvider } from '../provider/server';
import { loadConfig, temporalConnectOptions } from '../common/config';
import { startTracing, stopTracing } from '../common/tracing';
import { PROJECT_ROOT } from '../common/project-root';
import { createWorkerFromConfig } from '../worker/create-worker';
import { startWorkerStorage } from '../worker/storage';
import { loadWorkerTools } from '../worker/toolset';
import { main } from '../client/cli';
import { harnessClient } from '../client/connect';
import { startCodecServer } from '../client/codec-server';
import { isPortFree, startDevServer, type DevServer } from '../server/dev-server';

const START_USAGE = `usage: npm start [-- [--serve] [--real] [run flags]]
  (no flags)     the embedded Temporal dev server, the scripted provider, a worker, and one \`plan\` run
  --serve        keep server, provider and worker up (Ctrl-C to stop)
  --real         a real model on this machine instead of the scripted provider
  run flags      passed to \`agent-harness run\` (see \`bin/agent-harness.mjs run --help\`), e.g. --model destructive
environment: TEMPORAL_ADDRESS (or TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE), OTEL_EXPORTER_OTLP_ENDPOINT, TEMPORAL_DEV_PORT, TEMPORAL_UI_PORT, PORT, CODEC_PORT, MODEL_PORT (see the README)`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(START_USAGE);
  process.exit(0);
}

// A start-up failure (a port in use, no CLI) is one clear line, not a stack trace.
const startupFailed = (err: unknown) => {
  console.error(`npm start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(2);
};
process.on('uncaughtException', startupFailed);
process.on('unhandledRejection', startupFailed);

// The run's own lines are the output here; keep the SDK to warnings. Metrics
// on 127.0.0.1:9464 unless METRICS_PORT says otherwise (or `off`).
const wantedMetrics = process.env.METRICS_PORT === undefined ? '127.0.0.1:9464' : loadConfig().metricsAddress;
// Another `npm start` may hold the port: run without metrics rather than fail.
const metricsAddress = wantedMetrics && (await isPortFree(Number(wantedMetrics.split(':')[1]))) ? wantedMetrics : null;
installRuntime({ logLevel: 'WARN', metricsAddress });

const real = process.argv.includes('--real');
const args = process.argv.slice(2).filter((a) => a !== '--real');
// Each demo run gets a freshly seeded workspace, so a deletion approved in one
// run does not change what the next one finds.
if (!args.includes('--serve') && !args.some((a) => a === '--workspace' || a.startsWith('--workspace='))) {
  args.push('--workspace', `demo-${Date.now().toString(36)}`);
}
const serve = args.includes('--serve');
const cfg = loadConfig();
// MCP servers (AGENT_MCP_CONFIG) are connected and listed first: one that does not start stops us before anything else starts.
const tools = await loadWorkerTools(cfg).catch((err: unknown) => {
  console.error(`not started: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

// The codec server lets the Web UI show the compressed payloads as JSON.
const codecPort = Number(process.env.CODEC_PORT ?? 8888);
const codec = await startCodecServer(codecPort).catch(() => null);
const codecUrl = codec?.url ?? `http://127.0.0.1:${codecPort}`;

let server: DevServer | null = null;
if (!cfg.temporalAddress) {
  mkdirSync(resolve(PROJECT_ROOT, '.data'), { recursive: true });
  server = await startDevServer({
    port: cfg.devServer.port,
    uiPort: cfg.devServer.uiPort,
    dbFile: cfg.devServer.dbFile,
    logFile: resolve(PROJECT_ROOT, '.data/temporal-server.log'),
    uiCodecEndpoint: codecUrl,
  });
  console.log(
    server.child
      ? `Temporal dev server on ${server.address} (Web UI http://127.0.0.1:${cfg.devServer.uiPort}, data ${cfg.devServer.dbFile})`
      : `reusing the Temporal server already on ${server.address}`,
  );
}
const address = cfg.temporalAddress ?? server?.address ?? '';

let provider: RunningProvider | null = null;
let localModel: LocalModel | null = null;
if (real) {
  console.log('starting the local model (the first time: fetch the weights and build llama-server, ~7 minutes)');
  localModel = await startLocalModel({ port: Number(process.env.MODEL_PORT ?? 8081), logFile: resolve(PROJECT_ROOT, '.data/llama-server.log') });
  console.log(`local model ${localModel.model} on ${localModel.url} (loaded in ${localModel.loadSeconds.toFixed(1)} s)`);
  cfg.llmBaseUrl = localModel.url;
  cfg.llmModel = localModel.model;
  // Named in the run's input too, so its start line says what answers it.
  if (!args.includes('--model')) args.push('--model', localModel.model);
  // A real model may ask for a deletion nobody is there to approve: refuse it after a minute.
  if (!args.some((a) => a.startsWith('--approval-timeout-ms'))) args.push('--approval-timeout-ms', '60000');
} else if (!process.env.LLM_BASE_URL) {
  const healthy = await fetch(`http://127.0.0.1:${cfg.providerPort}/health`).then((r) => r.ok, () => false);
  if (healthy) console.log(`reusing the scripted provider on port ${cfg.providerPort}`);
  else {
    provider = await startProvider({ port: cfg.providerPort, latencyMs: Number(process.env.PROVIDER_LATENCY_MS ?? 0) });
    console.log(`scripted provider on ${provider.url}`);
  }
}

const nativeConnection = await NativeConnection.connect(temporalConnectOptions(cfg, address));
// One tracer provider for the worker and the client of this process.
const tracing = startTracing(cfg.tracing, 'agent-harness');
const storage = await startWorkerStorage(cfg, nativeConnection);
const worker = await createWorkerFromConfig(nativeConnection, cfg, tools, storage.effects, tracing);
const workerDone = worker.run();
console.log(
  `worker on task queue ${cfg.taskQueue}${cfg.temporalAddress ? ` at ${address} (${cfg.temporalConnection.source}, namespace ${cfg.namespace})` : ''}; traces in ${cfg.traceDir}` +
    `${metricsAddress ? `; metrics http://${metricsAddress}/metrics` : ''}${tracing ? `; spans to ${tracing.endpoint}` : ''}`,
);

let code = 0;
if (serve) {
  console.log('serving; Ctrl-C to stop');
  await workerDone;
} else {
  const client = harnessClient(await Connection.connect(temporalConnectOptions(cfg, address)), cfg);
  code = await main(['run', ...args], client);
  worker.shutdown();
  await workerDone;
  await client.connection.close();
}
await storage.close();
await nativeConnection.close();
await stopTracing();
await tools.close();
await provider?.close();
await localModel?.stop();
codec?.server.close();
await server?.stop();
process.exit(code);
