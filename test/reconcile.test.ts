// A person reconciles a write whose outcome is unknown. The write goes to a
// real MCP server (its own process over stdio) that writes and then never
// answers, so its attempt ends "outcome unknown" every time. A run with
// `unknownOutcomes: "ask"` parks there (AgentStatus awaiting_reconciliation)
// instead of telling the model; the `reconcile` update says it happened (the
// model reads the person's words) or to try again (the write runs once more:
// the server's record shows it). Without the setting the model is told, as
// before.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../node/project-root.js';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { loadWorkerTools, type WorkerTools } from '../worker/toolset.js';
import { approveSignal, cancelSignal, reconcileUpdate, statusQuery, transcriptQuery } from '../common/run-messages.js';
import type { AgentInput, RunResult, RunStatusView } from '../common/contract.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { readRecord } from './mcp/fs-server.js';
import { writeStallingFsConfig } from './mcp/stalling-config.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
const exec = promisify(execFile);
const bin = join(PROJECT_ROOT, 'bin', 'agent-harness.mjs');

describe('a write whose outcome is unknown, reconciled by a person', () => {
  const { record, config } = writeStallingFsConfig(mkdtempSync(join(tmpdir(), 'reconcile-')));
  let tools: WorkerTools;
  let worker: { taskQueue: string; shutdown(): Promise<void> };

  beforeAll(async () => {
    tools = await loadWorkerTools({ toolModules: [], toolNames: null, mcpConfigPath: config });
    worker = await h.startWorker({ taskQueue: `reconcile-${randomUUID().slice(0, 8)}`, toolset: tools.toolset });
  });

  afterAll(async () => {
    await worker?.shutdown();
    await tools?.close();
  });

  /** The mcp scenario: list, then a write (approved here), then a slow read the test stops. */
  async function startWrite(extra: Partial<AgentInput>): Promise<WorkflowHandle> {
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue: worker.taskQueue,
      workflowId: `reconcile-${randomUUID().slice(0, 8)}`,
      args: [{ task: 'Write the report.', model: 'mcp', tools: ['fs_list', 'fs_write', 'fs_slow'], workspace: freshWorkspace(), toolTimeoutMs: 4000, ...extra }],
    });
    await waitForApproval(handle, 'c2');
    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    return handle;
  }

  const parkedOnReconciliation = (handle: WorkflowHandle, nth: number) =>
    waitFor(`reconciliation ${nth} of c2`, async () => {
      const s = await handle.query(statusQuery);
      const parks = h.trace(handle.workflowId).filter((l) => l.type === 'reconciliation_required').length;
      return s.agentStatus === 'awaiting_reconciliation' && parks === nth ? s : null;
    });

  const c2Result = async (handle: WorkflowHandle<typeof agentRun>) => (await handle.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 'c2')?.content;

  async function stopAndResult(handle: WorkflowHandle<typeof agentRun>): Promise<RunResult> {
    await handle.signal(cancelSignal, { reason: 'test done' });
    return handle.result();
  }

  it('"it happened", sent with temporal workflow update execute: the model reads the person\'s words, the write ran once, the status says what the run waits for', async () => {
    const before = readRecord(record).filter((l) => l.tool === 'write' && l.event === 'call').length;
    const handle = await startWrite({ unknownOutcomes: 'ask' });
    const parked = await parkedOnReconciliation(handle, 1);
    expect(parked).toMatchObject({
      status: 'interrupted',
      agentStatus: 'awaiting_reconciliation',
      interruption: { type: 'reconciliation', callId: 'c2', toolName: 'fs_write', known: expect.stringMatching(/^outcome unknown: /) },
    });
    // Nothing in the transcript for c2 yet: the model has not been told anything.
    expect(await c2Result(handle)).toBeUndefined();
    // Ops find it by its search attribute.
    await waitFor('the run listed as awaiting_reconciliation', async () => {
      for await (const w of h.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}' AND AgentStatus = 'awaiting_reconciliation'` })) return w.searchAttributes.AgentAwaitingCallId?.[0] === 'c2';
      return false;
    });
    // A wrong call id is refused with the reason, and changes nothing.
    await expect(handle.executeUpdate(reconcileUpdate, { args: [{ callId: 'c9', outcome: 'happened', result: 'x' }] })).rejects.toMatchObject({
      cause: { message: 'reconcile: call c9 does not await reconciliation; c2 (fs_write) does' },
    });
    await expect(handle.executeUpdate(reconcileUpdate, { args: [{ callId: 'c2', outcome: 'happened' }] })).rejects.toMatchObject({ cause: { message: expect.stringContaining('needs result') } });

    const { stdout } = await exec(
      findTemporalCli(),
      ['workflow', 'update', 'execute', '--workflow-id', handle.workflowId, '--name', 'reconcile', '--address', h.address, '--output', 'json',
        '--input', JSON.stringify({ callId: 'c2', outcome: 'happened', result: 'out/report.txt holds the report (checked by hand).', by: 'bob' })],
      { timeout: 30_000 },
    );
    expect((JSON.parse(stdout) as { result: RunStatusView }).result.agentStatus).toBe('running');
    expect(await c2Result(handle)).toBe('out/report.txt holds the report (checked by hand).\n(fs_write: its attempt did not report; bob checked and confirmed that it happened.)');
    expect(h.trace(handle.workflowId).find((l) => l.type === 'reconciliation_decided')).toMatchObject({ callId: 'c2', outcome: 'happened', by: 'bob' });
    expect(readRecord(record).filter((l) => l.tool === 'write' && l.event === 'call').length - before).toBe(1);
    expect((await stopAndResult(handle)).status).toBe('interrupted');
  });

  it('"try again" with agent-harness reconcile --retry: the write runs once more; unknown again, the run parks again', async () => {
    const before = readRecord(record).filter((l) => l.tool === 'write' && l.event === 'call').length;
    const handle = await startWrite({ unknownOutcomes: 'ask' });
    await parkedOnReconciliation(handle, 1);
    const env = { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: worker.taskQueue, TRACE_DIR: h.traceDir };
    const out = await exec(bin, ['reconcile', handle.workflowId, 'c2', '--retry', '--by', 'carol'], { env, timeout: 60_000 });
    expect(out.stdout).toMatch(new RegExp(`^reconciled c2 on ${handle.workflowId} \\(retry\\); run is now \\w+`));
    // The second attempt took the stale claim over and wrote again; the server stalled again.
    await parkedOnReconciliation(handle, 2);
    expect(readRecord(record).filter((l) => l.tool === 'write' && l.event === 'call').length - before).toBe(2);
    const starts = h.trace(handle.workflowId).filter((l) => l.type === 'tool_start' && l.callId === 'c2');
    expect(starts.map((l) => l.retryUnknown ?? false)).toEqual([false, true]);
    // Both flags, or none, is a usage error before anything is sent.
    const bad = await exec(bin, ['reconcile', handle.workflowId, 'c2', '--retry', '--happened', 'x'], { env, timeout: 60_000 }).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(bad?.code).toBe(2);
    expect(bad?.stderr).toContain('reconcile takes one of --happened "what happened" and --retry');

    await handle.executeUpdate(reconcileUpdate, { args: [{ callId: 'c2', outcome: 'happened', result: 'written twice, same content', by: 'carol' }] });
    expect(await c2Result(handle)).toMatch(/^written twice, same content\n/);
    expect((await stopAndResult(handle)).status).toBe('interrupted');
  });

  it('a Stop while parked ends the run interrupted, and the model\'s transcript says the outcome is unknown', async () => {
    const handle = await startWrite({ unknownOutcomes: 'ask' });
    await parkedOnReconciliation(handle, 1);
    const r = await stopAndResult(handle);
    expect(r).toMatchObject({ status: 'interrupted', agentStatus: 'interrupted' });
    expect(await c2Result(handle)).toMatch(/^outcome unknown: /);
    expect(h.trace(handle.workflowId).find((l) => l.type === 'reconciliation_decided')).toMatchObject({ callId: 'c2', outcome: 'stopped' });
  });

  it('without unknownOutcomes "ask" the model is told the outcome is unknown, and the run never parks', async () => {
    const handle = await startWrite({});
    await waitFor('c2\'s result', () => c2Result(handle));
    expect(await c2Result(handle)).toMatch(/^outcome unknown: /);
    expect(h.trace(handle.workflowId).some((l) => l.type === 'reconciliation_required')).toBe(false);
    await stopAndResult(handle);
  });
});
