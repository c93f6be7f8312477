// The processes around a run come and go: the Temporal server is killed and
// restarted on its SQLite file, or one of two workers dies. The runs finish.
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { dataConverter } from '../node/payload-codec.js';
import { approveSignal, statusQuery } from '../common/run-messages.js';
import { freshWorkspace, replayRuns, useHarness, waitFor } from './helpers/harness.js';
import { startWorkerProcess } from './helpers/worker-process.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });

describe('server restart', () => {
  it('the dev server killed mid-run and restarted on the same SQLite file: every run finishes', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'restart-'));
    const port = await findFreePort();
    const serverOpts = { port, uiPort: null, dbFile: join(dir, 'temporal.db'), logFile: join(dir, 'server.log'), startTimeoutMs: 60_000 };
    let server = await startDevServer(serverOpts);
    const taskQueue = `restart-${randomUUID().slice(0, 8)}`;
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, address: server.address });
    const connect = async () => new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: dataConverter() });
    let client = await connect();
    try {
      const ws = freshWorkspace();
      const slow = await client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `restart-slow-${ws}`, args: [{ task: 'Scan.', model: 'slow' }] });
      const parked = await client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `restart-approve-${ws}`, args: [{ task: 'Tidy.', model: 'destructive', workspace: ws }] });
      await waitFor('the scan to report progress', () => h.trace(slow.workflowId).some((l) => l.type === 'tool_progress'));
      await waitFor('the approval', async () => (await parked.query(statusQuery)).interruption?.type === 'approval');

      // A crash, not a shutdown.
      server.child?.kill('SIGKILL');
      await new Promise((r) => server.child?.once('exit', r));
      await client.connection.close();
      server = await startDevServer(serverOpts);
      client = await connect();

      const slowResult = await client.workflow.getHandle<typeof agentRun>(slow.workflowId).result();
      expect(slowResult).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
      const approveHandle = client.workflow.getHandle<typeof agentRun>(parked.workflowId);
      // Still parked on the same call after the restart.
      await waitFor('the approval after restart', async () => (await approveHandle.query(statusQuery)).interruption?.type === 'approval');
      await approveHandle.signal(approveSignal, { callId: 'c2', by: 'after-restart' });
      expect((await approveHandle.result()).output).toBe('Deleted access.log to free space.');
      expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
      for (const id of [slow.workflowId, parked.workflowId]) {
        const lines = h.trace(id).filter((l) => l.step === undefined);
        expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
      }
      // This server goes with the test: its runs replay here, not at the end of the file.
      await replayRuns(client, [slow, parked].map((r) => ({ workflowId: r.workflowId, runId: r.firstExecutionRunId })));
    } finally {
      await worker.kill();
      await client.connection.close();
      await server.stop();
    }
  });
});

describe('two workers on one task queue', () => {
  it('one is killed mid-run; the other finishes every run', { timeout: 120_000 }, async () => {
    const taskQueue = `pair-${randomUUID().slice(0, 8)}`;
    const common = { taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot };
    const [a, b] = await Promise.all([startWorkerProcess(common), startWorkerProcess(common)]);
    try {
      const handles = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          h.client.workflow.start<typeof agentRun>('agentRun', {
            taskQueue,
            workflowId: `pair-${i}-${randomUUID().slice(0, 8)}`,
            args: [{ task: 'Scan.', model: 'slow' }],
            workflowTaskTimeout: '2s',
          }),
        ),
      );
      await waitFor('every scan under way', () => handles.every((hd) => h.trace(hd.workflowId).some((l) => l.type === 'tool_progress')));
      await a.kill();
      const results = await Promise.all(handles.map((hd) => hd.result()));
      for (const r of results) expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
      for (const hd of handles) {
        const lines = h.trace(hd.workflowId).filter((l) => l.step === undefined);
        expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
        expect(lines.map((l) => l.type)).toEqual(['run_started', 'turn', 'tool_start', 'tool_result', 'turn', 'run_stopped']);
      }
    } finally {
      await a.kill();
      await b.kill();
    }
  });
});
