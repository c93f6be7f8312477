// What a worker process prints when a run fails outright (bad input): one line
// naming the run and the error, not the SDK's stack trace for each.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { useHarness, waitFor } from './helpers/harness.js';
import { startWorkerProcess } from './helpers/worker-process.js';
import { temporalOk } from './helpers/temporal-cli.js';
import { isDocumented } from './helpers/documented.js';

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

  it('a failed model attempt is one line (the run, the attempt, the error), no stack trace (issue 34, 5g)', { timeout: 120_000 }, async () => {
    const taskQueue = `log-${randomUUID().slice(0, 8)}`;
    // A provider that is not there: every model attempt fails, and Temporal retries it.
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { LLM_BASE_URL: 'http://127.0.0.1:9/v1' } });
    const id = `outage-${randomUUID().slice(0, 8)}`;
    try {
      await temporalOk(h.address, 'workflow', 'start', '--type', 'agentRun', '--task-queue', taskQueue, '--workflow-id', id, '--input', JSON.stringify({ task: 't', model: 'plan' }));
      const said = await waitFor('two failed attempts logged', () => {
        const attempts = worker.output().split('\n').filter((l) => l.includes(`of run ${id} attempt`));
        return attempts.length >= 2 ? worker.output() : null;
      }, 90_000);
      const attempts = said.split('\n').filter((l) => l.includes(`of run ${id} attempt`));
      expect(attempts[0]).toMatch(new RegExp(`\\[WARN\\] activity \\w+ of run ${id} attempt 1 failed after \\d+ ms: \\w+.*: .+`));
      expect(attempts[1]).toMatch(/attempt 2 failed/);
      expect(isDocumented(attempts[0].replace(/^.*?\[WARN\] /, ''))).toBe(true);
      expect(said).not.toMatch(/^\s+at /m);
    } finally {
      await h.client.workflow.getHandle(id).terminate('test over').catch(() => undefined);
      await worker.kill();
    }
  });
});
