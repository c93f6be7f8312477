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
// However it ends (the run's end, Ctrl-C, SIGTERM, a failure half-way through
// start-up), it stops everything it started; a failure is one line naming
// what failed and the setting that fixes it.
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { installRuntime } from '../../worker/telemetry.js';
import { startLocalModel } from '../model/local-model.js';
import { PROVIDER_SERVICE, startProvider } from '../provider/server.js';
import { loadConfig, temporalConnectOptions, type ProcessConfig } from '../../node/config.js';
import { startTracing, stopTracing } from '../../node/tracing.js';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { createWorkerWith, workerProcessOptions } from '../../worker/create-worker.js';
import { pluginOptionsFromEnv, standalonePlugin } from '../../worker/env-options.js';
import { toolsOfModules } from '../../worker/toolset.js';
import { startupRefusal, workerNotCreated } from '../../worker/startup-errors.js';
import { cannotReach } from '../../node/connection-errors.js';
import { main as cli } from '../../client/cli.js';
import { harnessClient } from '../../client/connect.js';
import { codecServerOptionsFromEnv, startCodecServer } from '../../client/codec-server.js';
import { startDevServer, tryConnect } from '../../worker/dev-server/dev-server.js';
import { Teardown } from './teardown.js';
import { addressInUseLine, busyLine, busyPorts, type PortClaim } from './ports.js';
import { forgetServer, recordFile, recordServer, serverOnPort, stopLeftover } from './leftover-server.js';

const START_USAGE = `usage: npm start [-- [--serve] [--real] [run flags]]
  (no flags)     the embedded Temporal dev server, the scripted provider, a worker, and one \`plan\` run
  --serve        keep server, provider and worker up (Ctrl-C to stop)
  --real         a real model on this machine instead of the scripted provider
  run flags      passed to \`agent-harness run\` (see \`bin/agent-harness.mjs run --help\`), e.g. --model destructive
environment: TEMPORAL_ADDRESS (or TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE), OTEL_EXPORTER_OTLP_ENDPOINT, TEMPORAL_DEV_PORT, TEMPORAL_UI_PORT, PORT, CODEC_PORT, METRICS_PORT, MODEL_PORT (see docs/configuration.md)`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(START_USAGE);
  process.exit(0);
}

const teardown = new Teardown();
/** The ports this process listens on, to name a busy one. */
let claims: PortClaim[] = [];
const serve = process.argv.includes('--serve');

// A failure is one line, after everything started so far is stopped.
const failed = (err: unknown) => {
  if (!teardown.started) void teardown.exit(2, `npm start: ${addressInUseLine(err, claims) ?? startupRefusal(err)}`);
};
process.on('uncaughtException', failed);
process.on('unhandledRejection', failed);
// Ctrl-C or SIGTERM: stop everything. With --serve that is the normal way to end.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (!teardown.started) void teardown.exit(serve ? 0 : signal === 'SIGINT' ? 130 : 143);
  });
}

start().then((code) => teardown.exit(code), failed);

async function start(): Promise<number> {
  const cfg = loadConfig();
  // The worker's AgentPlugin options, read now so a bad variable stops the stack before it starts anything.
  let { plugin: options } = pluginOptionsFromEnv(process.env, cfg);
  const real = process.argv.includes('--real');
  const args = process.argv.slice(2).filter((a) => a !== '--real');
  // Each demo run gets a freshly seeded workspace, so a deletion approved in one
  // run does not change what the next one finds.
  if (!serve && !args.some((a) => a === '--workspace' || a.startsWith('--workspace='))) {
    args.push('--workspace', `demo-${Date.now().toString(36)}`);
  }

  // Every port is checked before anything starts. A port the person chose
  // (METRICS_PORT, CODEC_PORT, PORT, MODEL_PORT) must be free; the defaults
  // of the extras (metrics, codec) may be held by another `npm start`.
  const metricsChosen = process.env.METRICS_PORT !== undefined && process.env.METRICS_PORT !== '';
  const metricsAddress = metricsChosen ? cfg.metricsAddress : '127.0.0.1:9464';
  const codecPort = Number(process.env.CODEC_PORT || 8888);
  const modelPort = Number(process.env.MODEL_PORT || 8081);
  const wantProvider = !real && !process.env.LLM_BASE_URL;
  // Another npm start's provider is shared; any other server answering /health there is not ours: the port is busy.
  const providerRunning = wantProvider && (await isOurProvider(cfg.providerPort));
  claims = [
    ...(metricsAddress ? [{ port: Number(metricsAddress.split(':').pop()), what: 'Prometheus metrics', env: 'METRICS_PORT', chosen: metricsChosen }] : []),
    { port: codecPort, what: 'the codec server the Web UI calls', env: 'CODEC_PORT', chosen: !!process.env.CODEC_PORT },
    ...(real ? [{ port: modelPort, what: 'the local model', env: 'MODEL_PORT', chosen: true }] : []),
    ...(wantProvider && !providerRunning ? [{ port: cfg.providerPort, what: 'the scripted provider', env: 'PORT', chosen: true }] : []),
  ];
  const busy = await busyPorts(claims);
  const refused = busy.find((c) => c.chosen);
  if (refused) throw new Error(busyLine(refused));
  const isBusy = (env: string) => busy.some((c) => c.env === env);
  if (metricsAddress && isBusy('METRICS_PORT')) console.log(`metrics off: port 9464 is busy (another npm start?); set METRICS_PORT to serve them on another port`);
  if (isBusy('CODEC_PORT')) console.log(`codec server not started: port ${codecPort} is busy (another npm start?); the Web UI calls what answers there, or set CODEC_PORT`);

  // The run's own lines are the output here; keep the SDK to warnings.
  const watch = installRuntime({ logLevel: 'WARN', metricsAddress: metricsAddress && !isBusy('METRICS_PORT') ? metricsAddress : null });

  // The tool modules (AGENT_TOOLS_MODULES) first: one that names what does not exist stops us before anything else starts.
  const tools = await toolsOfModules(cfg.toolModules);

  // The codec server lets the Web UI show the compressed payloads as JSON.
  const codecUrl = `http://127.0.0.1:${codecPort}`;
  if (!isBusy('CODEC_PORT')) {
    // Answers the UI started here only (CODEC_ALLOW_ORIGIN to widen), with AGENT_CODEC_TOKEN when set.
    const codec = await startCodecServer(codecPort, '127.0.0.1', codecServerOptionsFromEnv(cfg.devServer.uiPort));
    teardown.add('the codec server', () => new Promise((r) => codec.server.close(r)));
  }

  const address = cfg.temporalAddress ?? (await devServer(cfg, codecUrl));

  if (real) {
    console.log('starting the local model (the first time: fetch the weights and build llama-server, 5 to 20 minutes depending on the machine)');
    const localModel = await startLocalModel({ port: modelPort, logFile: resolve(PROJECT_ROOT, '.data/llama-server.log') });
    teardown.add('the local model', () => localModel.stop());
    console.log(`local model ${localModel.model} on ${localModel.url} (loaded in ${localModel.loadSeconds.toFixed(1)} s)`);
    options = { ...options, model: { baseUrl: localModel.url, model: localModel.model } };
    // Named in the run's input too, so its start line says what answers it.
    if (!args.includes('--model')) args.push('--model', localModel.model);
    // A real model may ask for a deletion nobody is there to approve: refuse it after a minute.
    if (!args.some((a) => a.startsWith('--approval-timeout-ms'))) args.push('--approval-timeout-ms', '60000');
  } else if (providerRunning) {
    console.log(`reusing the scripted provider on port ${cfg.providerPort}`);
  } else if (wantProvider) {
    const provider = await startProvider({ port: cfg.providerPort, latencyMs: Number(process.env.PROVIDER_LATENCY_MS ?? 0) });
    teardown.add('the scripted provider', () => provider.close());
    console.log(`scripted provider on ${provider.url}`);
  }

  const source = cfg.temporalAddress ? cfg.temporalConnection.source : 'TEMPORAL_DEV_PORT';
  const nativeConnection = await NativeConnection.connect(temporalConnectOptions(cfg, address)).catch((err: unknown) => {
    throw new Error(cannotReach(address, source, err));
  });
  teardown.add('the worker connection', () => nativeConnection.close());
  // One tracer provider for the worker and the client of this process.
  const tracing = startTracing(cfg.tracing, 'agent-harness');
  teardown.add('tracing', () => stopTracing());
  // The worker's plugin checks the namespace's search attributes and the
  // queue's other workers, connects the MCP servers (AGENT_MCP_CONFIG) and
  // opens the effect ledger before it polls; it closes them when the worker stops.
  const plugin = standalonePlugin(options, tools, tracing);
  const worker = await createWorkerWith({ ...workerProcessOptions(cfg), connection: nativeConnection }, plugin).catch((err: unknown) => {
    throw new Error(workerNotCreated(err, cfg.workflowBundlePath));
  });
  teardown.add('the tools and the effect ledger', () => plugin.close());
  cfg.taskQueue = plugin.summary()?.taskQueue ?? cfg.taskQueue;
  // The run is started by the CLI's code, which reads the queue from the environment.
  process.env.AGENT_TASK_QUEUE = cfg.taskQueue;
  const workerDone = worker.run();
  teardown.add('the worker', () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    return workerDone;
  });
  watch.watch(nativeConnection, address);
  // Stopped first: the server going away at the end is no outage.
  teardown.add('the server watch', () => watch.stop());
  console.log(
    `worker on task queue ${cfg.taskQueue}${cfg.temporalAddress ? ` at ${address} (${cfg.temporalConnection.source}, namespace ${cfg.namespace})` : ''}; traces in ${cfg.traceDir}` +
      `${metricsAddress && !isBusy('METRICS_PORT') ? `; metrics http://${metricsAddress}/metrics` : ''}${tracing ? `; spans to ${tracing.endpoint}` : ''}`,
  );

  if (serve) {
    console.log('serving; Ctrl-C to stop');
    await workerDone;
    return 0;
  }
  const client = harnessClient(await Connection.connect(temporalConnectOptions(cfg, address)), cfg);
  teardown.add('the client connection', () => client.connection.close());
  return cli(['run', ...args], client);
}

/**
 * The embedded dev server's address: one this process starts, or one it may
 * share. A server an earlier `npm start` left behind (killed before it could
 * stop it) is stopped and replaced, saying so.
 */
async function devServer(cfg: ProcessConfig, codecUrl: string): Promise<string> {
  const { port, uiPort, dbFile } = cfg.devServer;
  const record = recordFile(dbFile, port);
  const found = serverOnPort(record, port);
  if (found.kind === 'leftover') {
    await stopLeftover(found.pid);
    forgetServer(record);
    console.log(`stopped the Temporal dev server (pid ${found.pid}) that an earlier npm start left running on port ${port}`);
  } else if (found.kind === 'unrecorded') {
    const running = await tryConnect(`127.0.0.1:${port}`, 1000);
    await running?.close();
    if (running) console.log(`reusing the Temporal server already on 127.0.0.1:${port} (not started by npm start: it keeps running after this one)`);
  }
  mkdirSync(resolve(PROJECT_ROOT, '.data'), { recursive: true });
  const logFile = resolve(PROJECT_ROOT, '.data/temporal-server.log');
  const server = await startDevServer({ port, uiPort, dbFile, logFile, uiCodecEndpoint: codecUrl });
  if (!server.child) {
    if (found.kind === 'shared') console.log(`reusing the Temporal dev server of the npm start running as pid ${found.ownerPid}`);
    return server.address;
  }
  const child = server.child;
  recordServer(record, child.pid ?? 0);
  teardown.add('the Temporal dev server', async () => {
    await server.stop();
    forgetServer(record);
  });
  // Ours to stop; if it stops by itself, nothing here can work any more.
  child.once('exit', (code, sig) => {
    if (!teardown.started) void teardown.exit(1, `npm start: the Temporal dev server exited (${code ?? sig}); see ${logFile}`);
  });
  console.log(`Temporal dev server on ${server.address} (Web UI http://127.0.0.1:${uiPort}, data ${dbFile})`);
  return server.address;
}

/** Whether the scripted provider (ours: its /health names PROVIDER_SERVICE) answers on the port. */
async function isOurProvider(port: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
    if (!r.ok) return false;
    const body = (await r.json()) as { service?: unknown } | null;
    return body?.service === PROVIDER_SERVICE;
  } catch {
    return false;
  }
}
