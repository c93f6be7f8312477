// The team's worker: its own workflows and activities, and the agent harness
// added by one plugin. The tools are values closing over the team's store.
import { fileURLToPath } from 'node:url';
import { createAnthropic } from '@ai-sdk/anthropic';
import { NativeConnection, Worker } from '@temporalio/worker';
import { AgentPlugin } from 'temporal-agent-harness/worker';
import { ticketTools, type Ticket } from './tickets.js';

export interface TeamWorkerOptions {
  address: string;
  taskQueue: string;
  /** An Anthropic Messages endpoint (in the test: the harness's scripted model, which speaks it too). */
  modelBaseUrl: string;
  /** Where the agent's runs keep their files (one folder per run's workspace). */
  workspace: string;
  store: Map<string, Ticket>;
}

export async function startTeamWorker(opts: TeamWorkerOptions): Promise<{ done: Promise<void>; shutdown(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    taskQueue: opts.taskQueue,
    workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
    // The team's own activities sit beside the harness's.
    activities: { ticketCount: async () => opts.store.size },
    plugins: [new AgentPlugin({ tools: ticketTools(opts.store), model: { provider: createAnthropic({ baseURL: opts.modelBaseUrl, apiKey: process.env.ANTHROPIC_API_KEY ?? 'sk-scripted' }) }, workspace: opts.workspace })],
  });
  const done = worker.run();
  return {
    done,
    shutdown: async () => {
      worker.shutdown();
      await done;
      await connection.close();
    },
  };
}
