// The worker of bench/decision-shapes.ts, a process of its own so its CPU is
// read apart from the client's: TEMPORAL_ADDRESS, TASK_QUEUE; cache 500 as
// bench/decisions.ts gives ours.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from './activities.js';

const address = process.env.TEMPORAL_ADDRESS;
const taskQueue = process.env.TASK_QUEUE;
if (!address || !taskQueue) throw new Error('TEMPORAL_ADDRESS and TASK_QUEUE must be set');
const connection = await NativeConnection.connect({ address });
const worker = await Worker.create({
  connection,
  taskQueue,
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  activities,
  maxCachedWorkflows: 500,
});
process.stdout.write('ready\n');
await worker.run();
