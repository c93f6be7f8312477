// The stack a benchmark runs on: a fresh in-memory dev server, the scripted
// provider in a process of its own (./provider-process.ts), one worker (and any
// more a benchmark adds) and a client, all on this machine.
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort, startDevServer, type DevServer } from '../worker/dev-server/dev-server.js';
import { dataConverter } from '../node/payload-codec.js';
import { startProviderProcess, type ProviderProcess, type ProviderProcessOptions } from './provider-process.js';
import { createAgentWorker } from '../worker/create-worker.js';
import type { AgentPluginOptions } from '../worker/plugin-options.js';
import type { PluginSeams } from '../worker/agent-plugin.js';
import type { Toolset } from '../activities/tools/toolset.js';
import { benchToolset } from './long-call-tool.js';

/** What a worker of the stack sets beyond the stack's own settings (server, provider, workspace, traces, tools). */
export type BenchWorkerOptions = Partial<AgentPluginOptions> & { seams?: PluginSeams };

export interface BenchStack {
  client: Client;
  worker: Worker;
  taskQueue: string;
  /** Another worker on the stack's connection and settings, on a queue of its own; the caller runs it and shuts it down before close(). */
  addWorker(taskQueue: string, extra?: BenchWorkerOptions): Promise<Worker>;
  traceDir: string;
  workspaceRoot: string;
  /** The dev server's address. */
  address: string;
  /** The scripted provider's base URL (its /_control routes sit beside it). */
  providerUrl: string;
  /** The key the scripted provider requires, if it was started with one. */
  providerApiKey?: string;
  /** The scripted provider's process, for ./proc-cpu.ts. */
  providerPid: number;
  /** The dev server's Prometheus endpoint (./server-metrics.ts reads it). */
  metricsUrl: string;
  /** The dev server's process (`temporal server start-dev` runs the whole server in it), for ./proc-cpu.ts. */
  serverPid: number;
  close(): Promise<void>;
}

export interface BenchStackOptions {
  dynamicConfig?: Record<string, unknown>;
  /** Another model endpoint than the scripted provider (the real-model seam). */
  llm?: { baseUrl: string; apiKey?: string; model?: string };
  /** The worker runs the loop only; model and tool calls wait for another process (./activity-worker.ts). */
  loopOnly?: boolean;
  /** The tools offered (default: the built-ins and ./long-call-tool.ts's long_call; null: the harness's own default, the built-ins). */
  toolset?: Toolset | null;
  /** The scripted provider's options (default: its own, no key, its time model's defaults). */
  provider?: ProviderProcessOptions;
  /** The stack's own worker's options beyond the stack's. */
  worker?: BenchWorkerOptions;
}

let runtimeInstalled = false;

export async function startBenchStack(opts: BenchStackOptions = {}): Promise<BenchStack> {
  const dynamicConfig = opts.dynamicConfig ?? {};
  if (!runtimeInstalled) Runtime.install({ logger: new DefaultLogger('ERROR') });
  runtimeInstalled = true;
  const dir = mkdtempSync(join(tmpdir(), 'agent-bench-'));
  const metricsPort = await findFreePort();
  const server: DevServer = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig, metricsPort });
  // Always a server of its own (the port is free), so there is a process to measure.
  const serverPid = server.child?.pid;
  if (serverPid === undefined) throw new Error(`the bench found a running server at ${server.address} instead of starting its own`);
  const provider: ProviderProcess = await startProviderProcess(opts.provider);
  const traceDir = join(dir, 'traces');
  const workspaceRoot = join(dir, 'ws');
  const nc = await NativeConnection.connect({ address: server.address });
  const toolset = opts.toolset === null ? undefined : (opts.toolset ?? benchToolset());
  const apiKey = opts.llm?.apiKey ?? opts.provider?.apiKey;
  const addWorker = (taskQueue: string, { seams, ...extra }: BenchWorkerOptions = {}) =>
    createAgentWorker({
      ...(seams ? { seams } : {}),
      connection: nc,
      taskQueue,
      plugin: {
        model: { baseUrl: opts.llm?.baseUrl ?? provider.url, ...(apiKey ? { apiKey } : {}), ...(opts.llm?.model ? { model: opts.llm.model } : {}) },
        workspace: workspaceRoot,
        traceDir,
        ...extra,
      },
      ...(opts.loopOnly ? { loopOnly: true } : {}),
      ...(toolset ? { toolset } : {}),
    });
  const worker = await addWorker('bench', opts.worker);
  const client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: dataConverter() });
  return {
    client,
    worker,
    taskQueue: 'bench',
    addWorker,
    traceDir,
    workspaceRoot,
    providerUrl: provider.url,
    providerApiKey: opts.provider?.apiKey,
    providerPid: provider.pid,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    serverPid,
    address: server.address,
    close: async () => {
      await client.connection.close();
      await nc.close();
      await provider.close();
      await server.stop();
    },
  };
}
