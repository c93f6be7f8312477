// What a worker process prints when a run fails outright (bad input): one line
// naming the run and the error, not the SDK's stack trace for each.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { useHarness, waitFor } from './helpers/harness.js';
import { startWorkerProcess } from './helpers/worker-process.js';
import { temporalOk } from './helpers/temporal-cli.js';

const h = useHarness({ worker: false });

describe('worker log', () => {
  it('a run started with invalid input: one line naming the run and the error, no stack trace', { timeout: 120_000 }, async () => {
    const taskQueue = `log-${randomUUID().slice(0, 8)}`;
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot });
    try {
      const id = `bad-input-${randomUUID().slice(0, 8)}`;
      // As an operator would start it: the temporal CLI with an input missing its task.
      await temporalOk(h.address, 'workflow', 'start', '--type', 'agentRun', '--task-queue', taskQueue, '--workflow-id', id, '--input', '{}');
      await expect(h.client.workflow.getHandle(id).result()).rejects.toBeInstanceOf(WorkflowFailedError);
      const said = await waitFor('the worker to log the failed run', () => {
        const lines = worker.output().split('\n').filter((l) => l.includes(id));
        return lines.length > 0 ? worker.output() : null;
      });
      const about = said.split('\n').filter((l) => l.includes(id));
      expect(about).toHaveLength(1);
      expect(about[0]).toMatch(new RegExp(`\\[WARN\\] run ${id} \\(agentRun, run id [\\w-]+\\) failed: ApplicationFailure: invalid input: task is required`));
      expect(said).not.toMatch(/^\s+at /m);
    } finally {
      await worker.kill();
    }
  });
});
