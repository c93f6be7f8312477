// A worker in its own process (`npm run worker`'s entry point), for whatever
// must kill one with SIGKILL as a crash would: the crash tests, the resume
// experiment.
import { spawn, type ChildProcess } from 'node:child_process';
import { PROJECT_ROOT } from '../../node/project-root.js';
import type { CrashPoint } from './faults.js';

/**
 * The suite's workers cache up to 64 runs (more than any test keeps alive, so
 * none is evicted for room: an eviction cancels a local activity mid-call) and
 * wait 1 s for a run's cached worker before another may take its task, so a
 * test that stops one worker sees a survivor take over promptly.
 */
export const TEST_CACHE = { maxCachedWorkflows: 64, stickyTimeoutMs: 1000 } as const;

export interface WorkerProcess {
  child: ChildProcess;
  kill(): Promise<void>;
  exited: Promise<void>;
  /** Everything the process wrote so far (stdout and stderr), for a failing test's report. */
  output(): string;
}

export interface WorkerProcessOptions {
  address: string;
  taskQueue: string;
  traceDir: string;
  workspaceRoot: string;
  llmBaseUrl: string;
  /** A prebuilt workflow bundle: the worker starts faster. */
  workflowBundlePath?: string;
  /** Extra environment, such as AGENT_LEDGER_URL. */
  env?: Record<string, string>;
  /** Where the worker dies with SIGKILL, mid-write (./faults.ts): it then runs ./crash-worker.ts, the standalone worker with that fault installed. */
  crashAt?: CrashPoint;
}

export async function startWorkerProcess(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  const entry = opts.crashAt ? ['test/helpers/crash-worker.ts', opts.crashAt] : ['worker/main.ts'];
  const child = spawn(process.execPath, ['--import', 'tsx', ...entry], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: opts.address,
      AGENT_TASK_QUEUE: opts.taskQueue,
      TRACE_DIR: opts.traceDir,
      AGENT_WORKSPACE: opts.workspaceRoot,
      LLM_BASE_URL: opts.llmBaseUrl,
      ...(opts.workflowBundlePath ? { WORKFLOW_BUNDLE_PATH: opts.workflowBundlePath } : {}),
      WORKER_MAX_CACHED_WORKFLOWS: String(TEST_CACHE.maxCachedWorkflows),
      WORKER_STICKY_TIMEOUT_MS: String(TEST_CACHE.stickyTimeoutMs),
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  // Kept whole (a worker logs little): a hung test shows what its workers said.
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', () => {
      if (output.includes('worker on ')) resolve();
    });
    child.once('exit', (code, sig) => reject(new Error(`worker exited (${code ?? sig}) before it was ready:\n${output}`)));
    setTimeout(() => reject(new Error(`worker not ready after 60 s:\n${output}`)), 60_000).unref();
  });
  return {
    child,
    exited,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
