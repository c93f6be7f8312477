// "No worker" is an answer (issue 22, part 3): with the run's worker stopped,
// the commands that need one say so in one line within seconds; a decision
// is either not sent (and nothing applies it when a worker comes back) or
// recorded as its signal with --when-worker-returns (and applied then);
// status still shows what Temporal holds; `run` on a queue nobody polls
// prints its start line and a warning; a port nothing listens on is
// "connection refused". A real dev server, real worker processes, the CLI as
// a process.
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKER, RECORDED_PENDING, USAGE_ERROR } from '../client/exit-codes.js';
import { queueWorkers } from '../client/worker-check.js';
import { BUILTIN_TOOL_NAMES, toolNamesHash } from '../client/offered-tools.js';
import { statusQuery } from '../common/run-messages.js';
import { findFreePort } from '../worker/dev-server/dev-server.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { isDocumented } from './helpers/documented.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';

const h = useHarness({ worker: false });
const exec = promisify(execFile);
const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');

/** The bound on the CLI's own time: "within seconds", generous for a loaded 2-core machine. */
const ANSWERS_WITHIN_MS = 15_000;

const env = (extra: Record<string, string> = {}) => ({ ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir, ...extra });

/** Runs the CLI to its end: exit code, output, and how long it took. */
async function cli(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const t0 = Date.now();
  const r = await exec(bin, args, { env: env(extraEnv), timeout: 120_000 }).then(
    (ok) => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  return { ...r, ms: Date.now() - t0 };
}

let worker: WorkerProcess | null = null;
const startWorker = async () => (worker = await startWorkerProcess({ taskQueue: h.taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot }));

beforeAll(async () => {
  await startWorker();
}, 120_000);

afterAll(async () => {
  await worker?.kill();
});

describe('with the run\'s worker stopped', () => {
  it('approve is not sent (and never applies), --when-worker-returns records it (and it applies), status and transcript say no worker', { timeout: 420_000 }, async () => {
    const ws = freshWorkspace();
    const notSent = `nw-a-${ws}`;
    const recorded = `nw-b-${ws}`;
    const cancelled = `nw-c-${ws}`;
    for (const id of [notSent, recorded, cancelled]) {
      const r = await cli(['run', '--model', 'destructive', '--workspace', `${ws}-${id.slice(3, 4)}`, '--id', id, '--detach']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${id}\n`);
      // A worker polls: no warning.
      expect(r.stderr).toBe('');
      await waitForApproval(h.client.workflow.getHandle(id), 'c2');
    }

    await worker?.kill();
    worker = null;
    // A killed worker's last poll stays on the queue's list; it counts as
    // polling for 75 s after that poll started (node/queue-pollers.ts).
    await waitFor('the queue to have no live poller', async () => !(await queueWorkers(h.client, h.taskQueue)).polling, 150_000);

    const noWorker = new RegExp(`^no worker polls task queue ${h.taskQueue} \\(the last one polled \\d+ s ago\\)`);

    const approve = await cli(['approve', notSent, 'c2', '--by', 'alice']);
    expect(approve.code, approve.stderr).toBe(NO_WORKER);
    expect(approve.ms).toBeLessThan(ANSWERS_WITHIN_MS);
    expect(approve.stdout).toBe('');
    expect(approve.stderr.trim().split('\n')).toHaveLength(1);
    expect(approve.stderr).toMatch(new RegExp(`^not sent: no worker polls task queue ${h.taskQueue} \\(the last one polled \\d+ s ago\\), so approve c2 was not sent to ${notSent}; start a worker on ${h.taskQueue} and try again; or pass --when-worker-returns`));
    expect(isDocumented(approve.stderr)).toBe(true);

    // An update-only command: not sent, and no flag to record it.
    const raise = await cli(['raise-budget', notSent, '--to', '1']);
    expect(raise.code, raise.stderr).toBe(NO_WORKER);
    expect(raise.stderr).toMatch(/^not sent: .*, so the raise to \$1 was not sent to .*; start a worker on \S+ and try again\n$/);

    const later = await cli(['approve', recorded, 'c2', '--by', 'bob', '--when-worker-returns']);
    expect(later.code, later.stderr).toBe(RECORDED_PENDING);
    expect(later.ms).toBeLessThan(ANSWERS_WITHIN_MS);
    expect(later.stdout).toMatch(new RegExp(`^recorded approve c2 for ${recorded} as the approve signal, pending; it applies when a worker takes the run \\(no worker polls task queue ${h.taskQueue} .*\\)\\n$`));
    expect(isDocumented(later.stdout)).toBe(true);

    // cancel: the signal is recorded, and the line says it applies only when a worker takes the run (issue 34, 5i).
    const cancel = await cli(['cancel', cancelled, '--reason', 'ops: stop it']);
    expect(cancel.code, cancel.stderr).toBe(RECORDED_PENDING);
    expect(cancel.stdout).toMatch(new RegExp(`^cancel recorded for ${cancelled}, pending; it applies when a worker takes the run \\(no worker polls task queue ${h.taskQueue} .*\\)\\n$`));
    expect(isDocumented(cancel.stdout)).toBe(true);

    const status = await cli(['status', notSent]);
    expect(status.code, status.stderr).toBe(NO_WORKER);
    expect(status.ms).toBeLessThan(ANSWERS_WITHIN_MS);
    expect(status.stderr.split('\n')[0]).toMatch(noWorker);
    expect(isDocumented(status.stderr.split('\n')[0])).toBe(true);
    // What Temporal itself holds: the execution is running, parked on c2.
    expect(JSON.parse(status.stdout)).toMatchObject({
      workflowId: notSent,
      temporalStatus: 'RUNNING',
      taskQueue: h.taskQueue,
      searchAttributes: { AgentStatus: 'awaiting_approval', AgentAwaitingTool: 'delete_file', AgentAwaitingCallId: 'c2' },
    });

    const transcript = await cli(['transcript', notSent]);
    expect(transcript.code, transcript.stderr).toBe(NO_WORKER);
    expect(transcript.ms).toBeLessThan(ANSWERS_WITHIN_MS);
    expect(transcript.stdout).toBe('');
    expect(transcript.stderr).toMatch(noWorker);
    expect(transcript.stderr.trim().split('\n')).toHaveLength(1);

    // A worker comes back: the recorded approval applies; the one not sent does not.
    await startWorker();
    const decided = await waitFor('the recorded approval applied', () => h.trace(recorded).find((l) => l.type === 'approval_decided'));
    expect(decided).toMatchObject({ decision: 'approve', by: 'bob' });
    await h.client.workflow.getHandle(recorded).result();
    expect(await h.client.workflow.getHandle(cancelled).result()).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled' } });
    const parked = await h.client.workflow.getHandle(notSent).query(statusQuery);
    expect(parked.interruption).toMatchObject({ type: 'approval', callId: 'c2' });
    expect(h.trace(notSent).some((l) => l.type === 'approval_decided')).toBe(false);
    // Nothing reached the run: no update in its history, accepted or not.
    const history = await h.client.workflow.getHandle(notSent).fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes || e.workflowExecutionUpdateAdmittedEventAttributes)).toBe(false);

    // With a worker, approve answers as before.
    const now = await cli(['approve', notSent, 'c2', '--by', 'alice']);
    expect(now.code, now.stderr).toBe(0);
    expect(now.stdout).toMatch(new RegExp(`^approved c2 on ${notSent}; run is now`));
  });
});

describe('run on a queue nobody polls', () => {
  it('prints its start line at once, then one warning line; the run waits there', { timeout: 120_000 }, async () => {
    const queue = `nobody-${randomUUID().slice(0, 8)}`;
    h.replayQueue(queue);
    const id = `nw-run-${freshWorkspace()}`;
    const child = spawn(bin, ['run', '--model', 'plan', '--id', id], { env: env({ AGENT_TASK_QUEUE: queue }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await waitFor('the start line and the warning', () => stdout.includes('\n') && stderr.includes('\n'), ANSWERS_WITHIN_MS * 2);
      expect(stdout).toBe(`started ${id} on task queue ${queue}\n`);
      expect(stderr).toBe(`warning: no worker polls task queue ${queue} (none seen in the last 5 minutes): the run waits until one does\n`);
      expect(isDocumented(stderr)).toBe(true);
      // Still following (it waits for a worker), and the run is there.
      expect(child.exitCode).toBe(null);
      expect((await h.client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');
    } finally {
      child.kill('SIGKILL');
      await exited;
      await h.client.workflow.getHandle(id).terminate('test over');
    }
  });
});

describe('run --tools nope on a queue whose tools the client cannot read (issue 34, 5f)', () => {
  it('--detach waits for the run\'s first step and exits 2 naming the flag, never 0 for a run refused at its start', { timeout: 180_000 }, async () => {
    // A narrowed tool set: its identity's hash is not the built-in set's, so only the run can check the names.
    const queue = `narrowed-${randomUUID().slice(0, 8)}`;
    const narrowed = await startWorkerProcess({ taskQueue: queue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { AGENT_TOOLS: 'list_files,read_file' } });
    try {
      const id = `nw-tools-${freshWorkspace()}`;
      const r = await cli(['run', '--tools', 'nope', '--id', id, '--detach'], { AGENT_TASK_QUEUE: queue });
      expect(r.code, r.stderr).toBe(USAGE_ERROR);
      expect(r.stdout).toBe(`${id}\n`);
      expect(r.stderr).toBe('agent-harness run: --tools names an unknown tool "nope"; this worker offers list_files, read_file (see agent-harness run --help)\n');
      // A good name on the same queue still detaches at once with exit 0.
      const ok = await cli(['run', '--model', 'plan', '--tools', 'list_files', '--id', `${id}-ok`, '--detach'], { AGENT_TASK_QUEUE: queue });
      expect(ok.code, ok.stderr).toBe(0);
      expect((await h.client.workflow.getHandle(`${id}-ok`).result()).status).toBe('completed');
    } finally {
      await narrowed.kill();
    }
  });

  it('the client\'s built-in tool names hash as the worker\'s built-in tool set does', async () => {
    const { BUILTIN_TOOLS } = await import('../activities/tools/builtin.js');
    const { toolsetHash } = await import('../worker/tool-routing.js');
    expect([...BUILTIN_TOOL_NAMES].sort()).toEqual(BUILTIN_TOOLS.map((t) => t.name).sort());
    expect(toolNamesHash(BUILTIN_TOOL_NAMES)).toBe(toolsetHash(BUILTIN_TOOLS.map((t) => t.name)));
  });
});

describe('no server at the address', () => {
  it('says connection refused, at once, exit 2', async () => {
    const address = `127.0.0.1:${await findFreePort()}`;
    const r = await cli(['approve', 'some-run', 'c2'], { TEMPORAL_ADDRESS: address });
    expect(r.code).toBe(USAGE_ERROR);
    expect(r.ms).toBeLessThan(ANSWERS_WITHIN_MS);
    expect(r.stderr).toBe(`agent-harness: no Temporal server answers at ${address} (TEMPORAL_ADDRESS): connection refused; check that the server is running and that TEMPORAL_ADDRESS names it\n`);
    expect(isDocumented(r.stderr)).toBe(true);
  });
});
