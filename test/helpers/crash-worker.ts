// The standalone worker (`npm run worker`, configured from the environment)
// with a crash installed (./faults.ts): what the crash suites spawn to kill a
// worker mid-write, as a power cut would. Test-only: the shipped worker has
// no such switch. Usage: crash-worker.ts <crash point>.
import { NativeConnection } from '@temporalio/worker';
import { temporalConnectOptions } from '../../node/config.js';
import { createWorkerWith, workerProcessOptions } from '../../worker/create-worker.js';
import { standalonePlugin, standaloneWorkerConfig } from '../../worker/env-options.js';
import { toolsOfModules } from '../../worker/toolset.js';
import { CRASH_POINTS, crashAt, isCrashPoint } from './faults.js';

const point = process.argv[2] ?? '';
if (!isCrashPoint(point)) {
  console.error(`crash-worker: the crash point must be one of ${CRASH_POINTS.join(', ')}, got ${JSON.stringify(point)}`);
  process.exit(1);
}
const { process: cfg, plugin: options } = standaloneWorkerConfig();
if (!cfg.temporalAddress) {
  console.error('crash-worker: set TEMPORAL_ADDRESS (the test\'s dev server)');
  process.exit(1);
}
const plugin = standalonePlugin(options, await toolsOfModules(cfg.toolModules), null, console, crashAt(point));
const connection = await NativeConnection.connect(temporalConnectOptions(cfg, cfg.temporalAddress));
const worker = await createWorkerWith({ ...workerProcessOptions(cfg), connection }, plugin);
// The line startWorkerProcess waits for.
console.log(`worker on ${cfg.temporalAddress} taskQueue=${cfg.taskQueue} (dies at ${point})`);
await worker.run();
