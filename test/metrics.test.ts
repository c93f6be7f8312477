// The worker's Prometheus endpoint: the SDK's runtime metrics and the
// harness's own — turns, tokens, cost, tool errors, approvals, exits — from a
// worker process with METRICS_PORT set, after real runs.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { AgentClient } from '../client/agent-client.js';
import { findFreePort } from '../worker/dev-server/dev-server.js';
import { rejectSignal } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { startWorkerProcess } from './helpers/worker-process.js';
import { temporalOk } from './helpers/temporal-cli.js';
import type { agentRun } from '../workflows/index.js';
import type { AgentInput } from '../common/contract.js';

const h = useHarness({ worker: false });

describe('metrics', () => {
  it('a worker with METRICS_PORT serves the harness metrics beside the SDK ones', { timeout: 120_000 }, async () => {
    const port = await findFreePort();
    const taskQueue = `metrics-${randomUUID().slice(0, 8)}`;
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { METRICS_PORT: String(port) } });
    try {
      const start = (input: AgentInput) => h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `m-${randomUUID().slice(0, 8)}`, args: [input] });
      await (await start({ task: 'Which file mentions a timeout?', model: 'plan' })).result();
      const parked = await start({ task: 'Tidy up.', model: 'destructive', workspace: freshWorkspace() });
      await waitForApproval(parked, 'c2');
      await parked.signal(rejectSignal, { callId: 'c2', reason: 'no' });
      await parked.result();
      // A failed run is a result, so Temporal calls it Completed: ops find it by the search attribute and the metric.
      const failing = await start({ task: 'Which file mentions a timeout?', model: 'recover', toolErrors: 'fatal' });
      expect(await failing.result()).toMatchObject({ status: 'failed' });
      const value = (text: string, name: string, labels: string[] = []) =>
        text
          .split('\n')
          .filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
          .reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
      // Metrics are exported on an interval: wait for the numbers, not for time.
      const text = await waitFor('the harness metrics', async () => {
        const t = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
        return value(t, 'agent_turns') >= 7 && value(t, 'agent_runs', ['status="completed"']) >= 2 && value(t, 'agent_runs', ['status="failed"']) >= 1 ? t : null;
      });
      expect(value(text, 'agent_turns', ['agent_model="plan"'])).toBe(3);
      expect(value(text, 'agent_prompt_tokens')).toBeGreaterThan(1000);
      expect(value(text, 'agent_cost_microusd')).toBeGreaterThan(2000);
      expect(value(text, 'agent_approvals_requested', ['tool="delete_file"'])).toBe(1);
      expect(value(text, 'agent_approvals_decided', ['decision="reject"'])).toBe(1);
      expect(value(text, 'agent_tool_errors', ['kind="declined"'])).toBe(1);
      // docs/operations.md's alert metric and queries for failed runs, exactly as written there.
      expect(value(text, 'agent_runs', ['status="failed"'])).toBe(1);
      await waitFor('the failed run under AgentStatus="failed"', async () => {
        const listed = await temporalOk(h.address, 'workflow', 'list', '--query', 'AgentStatus="failed"');
        return listed.includes(failing.workflowId) ? true : null;
      });
      const counted = JSON.parse(await temporalOk(h.address, 'workflow', 'count', '--query', 'AgentStatus="failed"')) as { count?: string | number };
      expect(Number(counted.count)).toBeGreaterThanOrEqual(1);
      expect(text).toMatch(/^agent_approval_wait_ms_bucket\{/m);
      // The SDK's own metrics come through the same endpoint.
      expect(text).toMatch(/^temporal_[a-z_]+/m);
    } finally {
      await worker.kill();
    }
  });

  it('AGENT_FAIL_WORKFLOW_ON_FAILED: a failed run fails its workflow carrying its result (ExecutionStatus="Failed"); runs refused as bad input are in agent_runs (issue 34, 5l)', { timeout: 120_000 }, async () => {
    const port = await findFreePort();
    const taskQueue = `metrics-fail-${randomUUID().slice(0, 8)}`;
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { METRICS_PORT: String(port), AGENT_FAIL_WORKFLOW_ON_FAILED: 'true' } });
    try {
      const start = (input: AgentInput) => h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `mf-${randomUUID().slice(0, 8)}`, args: [input] });
      // A completed run still completes.
      expect(await (await start({ task: 'Which file mentions a timeout?', model: 'plan' })).result()).toMatchObject({ status: 'completed' });
      const failing = await start({ task: 'Which file mentions a timeout?', model: 'recover', toolErrors: 'fatal' });
      const failure = await failing.result().then(
        () => null,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      const cause = (failure as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('AgentRunFailed');
      expect((cause as ApplicationFailure).details?.[0]).toMatchObject({ runId: failing.workflowId, status: 'failed' });
      // AgentClient reads the same result as without the setting.
      const handle = new AgentClient({ client: h.client, taskQueue }).getHandle(failing.workflowId);
      expect(await handle.result()).toMatchObject({ status: 'failed', runId: failing.workflowId });
      // Temporal's own failure tooling sees it.
      await waitFor('the failed run under ExecutionStatus="Failed"', async () => ((await temporalOk(h.address, 'workflow', 'list', '--query', `ExecutionStatus="Failed" AND TaskQueue="${taskQueue}"`)).includes(failing.workflowId) ? true : null));

      // A run refused as invalid input (no task): counted in agent_runs with its error type.
      const bad = await start({} as AgentInput);
      await expect(bad.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      const value = (text: string, name: string, labels: string[] = []) =>
        text
          .split('\n')
          .filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
          .reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
      const text = await waitFor('agent_runs with the refused run', async () => {
        const t = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
        return value(t, 'agent_runs', ['error_type="InvalidInput"']) >= 1 && value(t, 'agent_runs', ['status="completed"']) >= 1 ? t : null;
      });
      expect(value(text, 'agent_runs', ['status="failed"', 'error_type="InvalidInput"'])).toBe(1);
      expect(value(text, 'agent_runs', ['status="failed"'])).toBe(2);
    } finally {
      await worker.kill();
    }
  });
});
