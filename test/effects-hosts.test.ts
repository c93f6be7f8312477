// Workers on two "hosts": two worker processes, each with its own local
// folders (workspaces), sharing one PostgreSQL ledger (started here). An
// approved delete_file: the worker that runs it is killed with SIGKILL in the
// middle of the write, the retry lands on the other worker. The deletion
// happens at most once (the survivor's copy of access.log stays: a per-host
// ledger would let it delete again), and the tool says what really happened:
// the outcome is unknown, started by the dead worker at a given time.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEffectStore } from '../activities/effects/postgres-store.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { findFreePort } from '../worker/dev-server/dev-server.js';
import { approveSignal, transcriptQuery } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitForApproval } from './helpers/harness.js';
import { isDocumented } from './helpers/documented.js';
import { startPostgres, type TestPostgres } from './helpers/postgres.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

describe('two workers, two hosts\' folders, one PostgreSQL ledger', () => {
  const cases = [
    // After the unlink, before the result is recorded: the file is gone on the dead worker's host.
    ['delete_file:after_unlink', true],
    // After the claim, before the unlink: nothing was deleted, yet nobody can know that.
    ['effect:after_claim', false],
  ] as const;
  for (const [crashAt, deletedOnDeadHost] of cases) {
    it(`a worker killed mid-write at ${crashAt}: the other one does not act blind and says the outcome is unknown`, { timeout: 300_000 }, async () => {
      const ledgerUrl = postgres.url('agent_ledger');
      const taskQueue = `hosts-${randomUUID().slice(0, 8)}`;
      const roots = [mkdtempSync(join(tmpdir(), 'host-a-')), mkdtempSync(join(tmpdir(), 'host-b-'))];
      // Both may die at the point: whichever takes the write does; the retry on the other never reaches it (it does not act).
      const env = { AGENT_LEDGER_URL: ledgerUrl };
      // One after the other: two processes starting at once on a loaded 2-core machine can outlast the start-up wait.
      const workers: WorkerProcess[] = [];
      for (const workspaceRoot of roots) workers.push(await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot, env, crashAt }));
      try {
        const workspace = freshWorkspace();
        const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
          taskQueue,
          workflowId: `hosts-${randomUUID().slice(0, 8)}`,
          args: [{ task: 'Free some space.', model: 'destructive', workspace }],
          // A task lost with its worker is handed out again after 2 s.
          workflowTaskTimeout: '2s',
        });
        await waitForApproval(handle, 'c2');
        await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
        const deadIndex = await Promise.race(workers.map((w, i) => w.exited.then(() => i)));
        const dead = workers[deadIndex];
        const survivor = workers[1 - deadIndex];
        expect(dead.child.signalCode).toBe('SIGKILL');

        const r = await handle.result();
        expect(r.status).toBe('completed');
        expect(survivor.child.exitCode).toBeNull();

        // At most once: the survivor's copy was never touched.
        const copy = (i: number) => join(roots[i], workspace, 'access.log');
        expect(existsSync(copy(1 - deadIndex))).toBe(true);
        expect(existsSync(copy(deadIndex))).toBe(!deletedOnDeadHost);

        // What the model read: who started it, when, and that it was not done again.
        const deadWorker = `${dead.child.pid}@${hostname()}`;
        const store = PostgresEffectStore.open(ledgerUrl);
        try {
          const [record] = (await store.oldest(Number.POSITIVE_INFINITY, 10_000)).filter((x) => x.workflowId === handle.workflowId);
          expect(record).toMatchObject({ state: 'unknown', holder: { worker: deadWorker, attempt: 1 }, unknownBy: `${survivor.child.pid}@${hostname()}` });
          const text = (await handle.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 'c2')?.content;
          expect(text).toBe(
            `outcome unknown: a previous attempt on ${deadWorker} started this delete_file call at ${new Date(record.claimedAt).toISOString()} and did not report; it may or may not have happened. It was not tried again.`,
          );
          expect(isDocumented(text ?? '')).toBe(true);
        } finally {
          await store.close();
        }
        // The trace: attempt 1 on the dead worker, the retry on the survivor.
        const execs = h.trace(handle.workflowId).filter((l) => l.type === 'tool_exec' && l.callId === 'c2');
        expect(execs.map((l) => [l.attempt, l.pid])).toEqual([
          [1, dead.child.pid],
          [2, survivor.child.pid],
        ]);
      } finally {
        await Promise.all(workers.map((w) => w.kill()));
      }
    });
  }

  it('a worker whose ledger database cannot be reached does not start, naming it', async () => {
    const port = await findFreePort();
    const out = spawnSync(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: `hosts-${randomUUID().slice(0, 8)}`, AGENT_LEDGER_URL: `postgres://agent@127.0.0.1:${port}/agent_ledger` },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(out.status).toBe(1);
    const line = out.stderr.trim().split('\n').at(-1) ?? '';
    expect(line).toBe(`worker not started: effect ledger postgres 127.0.0.1:${port}/agent_ledger: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(isDocumented(line)).toBe(true);
  });
});
