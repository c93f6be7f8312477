// The worker's Prometheus endpoint: the SDK's runtime metrics and the
// harness's own — turns, tokens, cost, tool errors, approvals, exits — from a
// worker process with METRICS_PORT set, after real runs.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { findFreePort } from '../worker/dev-server/dev-server';
import { rejectSignal } from '../common/run-messages';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './harness';
import { startWorkerProcess } from './worker-process';

const h = useHarness({ worker: false });

describe('metrics', () => {
  it('a worker with METRICS_PORT serves the harness metrics beside the SDK ones', { timeout: 120_000 }, async () => {
    const port = await findFreePort();
    const taskQueue = `metrics-${randomUUID().slice(0, 8)}`;
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { METRICS_PORT: String(port) } });
    try {
      const start = (input: object) => h.client.workflow.start('agentRun', { taskQueue, workflowId: `m-${randomUUID().slice(0, 8)}`, args: [input] });
      await (await start({ task: 'Which file mentions a timeout?', model: 'plan' })).result();
      const parked = await start({ task: 'Tidy up.', model: 'destructive', workspace: freshWorkspace() });
      await waitForApproval(parked, 'c2');
      await parked.signal(rejectSignal, { callId: 'c2', reason: 'no' });
      await parked.result();
      const value = (text: string, name: string, labels: string[] = []) =>
        text
          .split('\n')
          .filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
          .reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
      // Metrics are exported on an interval: wait for the numbers, not for time.
      const text = await waitFor('the harness metrics', async () => {
        const t = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
        return value(t, 'agent_turns') >= 6 && value(t, 'agent_runs', ['status="completed"']) >= 2 ? t : null;
      });
      expect(value(text, 'agent_turns', ['agent_model="plan"'])).toBe(3);
      expect(value(text, 'agent_prompt_tokens')).toBeGreaterThan(1000);
      expect(value(text, 'agent_cost_microusd')).toBeGreaterThan(2000);
      expect(value(text, 'agent_approvals_requested', ['tool="delete_file"'])).toBe(1);
      expect(value(text, 'agent_approvals_decided', ['decision="reject"'])).toBe(1);
      expect(value(text, 'agent_tool_errors', ['kind="declined"'])).toBe(1);
      expect(text).toMatch(/^agent_approval_wait_ms_bucket\{/m);
      // The SDK's own metrics come through the same endpoint.
      expect(text).toMatch(/^temporal_[a-z_]+/m);
    } finally {
      await worker.kill();
    }
  });
});
