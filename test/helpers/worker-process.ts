// The suite's worker processes: test/helpers/spawn-worker.ts wired to the shared
// dev server, provider and workflow bundle.
import { inject } from 'vitest';
import { replayRunsOnQueue } from './replay-queues.js';
import { startWorkerProcess as start, type WorkerProcess } from './spawn-worker.js';
import type { CrashPoint } from './faults.js';

export type { WorkerProcess };

export function startWorkerProcess(opts: {
  taskQueue: string;
  traceDir: string;
  workspaceRoot: string;
  address?: string;
  env?: Record<string, string>;
  crashAt?: CrashPoint;
}): Promise<WorkerProcess> {
  // Its runs replay at the end of the file, as the harness's own workers' do
  // (a run on a server of the test's own is the test's to replay: replayRuns).
  if (opts.address === undefined || opts.address === inject('temporalAddress')) replayRunsOnQueue(opts.taskQueue);
  return start({
    address: opts.address ?? inject('temporalAddress'),
    llmBaseUrl: inject('providerUrl'),
    workflowBundlePath: inject('workflowBundlePath'),
    ...opts,
  });
}
