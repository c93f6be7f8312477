// A real worker in its own process (`npm run worker`'s entry point), so tests
// can kill it with SIGKILL as a crash would.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

export interface WorkerProcess {
  child: ChildProcess;
  kill(): Promise<void>;
  exited: Promise<void>;
}

export interface WorkerProcessOptions {
  taskQueue: string;
  traceDir: string;
  workspaceRoot: string;
  llmBaseUrl?: string;
  /** Another Temporal server than the suite's. */
  address?: string;
  /** Extra environment, such as AGENT_CRASH_AT. */
  env?: Record<string, string>;
}

export async function startWorkerProcess(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: opts.address ?? inject('temporalAddress'),
      AGENT_TASK_QUEUE: opts.taskQueue,
      TRACE_DIR: opts.traceDir,
      AGENT_WORKSPACE: opts.workspaceRoot,
      LLM_BASE_URL: opts.llmBaseUrl ?? inject('providerUrl'),
      WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
      // No workflow cache, so no sticky queue: a survivor takes over at once.
      WORKER_MAX_CACHED_WORKFLOWS: '0',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (b: Buffer) => {
      output += b.toString();
      if (output.includes('worker on ')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
    child.once('exit', (code, sig) => reject(new Error(`worker exited (${code ?? sig}) before it was ready:\n${output}`)));
    setTimeout(() => reject(new Error(`worker not ready after 30 s:\n${output}`)), 30_000).unref();
  });
  return {
    child,
    exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
