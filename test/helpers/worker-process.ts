// The suite's worker processes: test/helpers/spawn-worker.ts wired to the shared
// dev server, provider and workflow bundle.
import { inject } from 'vitest';
import { startWorkerProcess as start, type WorkerProcess } from './spawn-worker.js';

export type { WorkerProcess };

export function startWorkerProcess(opts: {
  taskQueue: string;
  traceDir: string;
  workspaceRoot: string;
  address?: string;
  env?: Record<string, string>;
}): Promise<WorkerProcess> {
  return start({
    address: opts.address ?? inject('temporalAddress'),
    llmBaseUrl: inject('providerUrl'),
    workflowBundlePath: inject('workflowBundlePath'),
    ...opts,
  });
}
