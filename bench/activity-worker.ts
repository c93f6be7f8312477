// A worker process that runs model and tool calls only (no workflow task):
// the benchmark's "other process", where a Stop reaches a running call only
// through the answer to its next heartbeat. Prints "activity worker ready".
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createAgentWorker } from '../worker/create-worker.js';
import { benchToolset } from './long-call-tool.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

Runtime.install({ logger: new DefaultLogger('ERROR') });
const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
const worker = await createAgentWorker({
  connection,
  taskQueue: env('AGENT_TASK_QUEUE'),
  plugin: {
    model: { baseUrl: env('LLM_BASE_URL') },
    workspace: env('AGENT_WORKSPACE'),
    traceDir: env('TRACE_DIR'),
    ...(process.env.AGENT_HEARTBEAT_MS ? { heartbeatEveryMs: Number(process.env.AGENT_HEARTBEAT_MS) } : {}),
  },
  activitiesOnly: true,
  toolset: benchToolset(),
});
console.log('activity worker ready');
await worker.run();
await connection.close();
