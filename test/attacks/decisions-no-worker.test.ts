// Decisions with no worker have one answer (issue 34, item 4). The run's
// worker is SIGKILLed a moment before a decision: the server still lists its
// poller (a killed worker counts as polling for up to 75 s), so the CLI sends
// the `decide` update, which no worker takes. Before, the CLI waited 20 s and
// said "it may still apply" (exit 8), and the approval then applied when a
// worker returned: an ops tool cannot act on "may". Now it waits 5 s for a
// worker to ACCEPT the update, then records the decision as its signal and
// says "recorded …, pending" (exit 9); when a worker takes the run, exactly
// one decision applies (the first recorded), never the signal AND the update
// the server may still hold, and the outcome printed is the one that holds.
// Signed decisions keep working on that path. A real dev server, real worker
// processes SIGKILLed and started again, the CLI as a process.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ALREADY_FINISHED, RECORDED_PENDING } from '../../client/exit-codes.js';
import { queueWorkers } from '../../client/worker-check.js';
import { newKeyPair, type ApproverPolicy } from '../../common/signed-decision.js';
import { freshWorkspace, useHarness, waitForApproval } from '../helpers/harness.js';
import { isDocumented } from '../helpers/documented.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

const h = useHarness({ worker: false });
const exec = promisify(execFile);
const bin = join(import.meta.dirname, '..', '..', 'bin', 'agent-harness.mjs');

/** "Within seconds", generous for a loaded 2-core machine: the old answer took 20 s past the CLI's start. */
const ANSWERS_WITHIN_MS = 15_000;

const dir = mkdtempSync(join(tmpdir(), 'decisions-no-worker-'));
const alice = newKeyPair();
const aliceKey = join(dir, 'alice.key');
writeFileSync(aliceKey, `# test key\n${alice.privateKey}\n`, { mode: 0o600 });
const policyFile = join(dir, 'approvers.json');
const policy: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_file: ['alice'] } };
writeFileSync(policyFile, JSON.stringify(policy));

const env = () => ({ ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir });

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const t0 = Date.now();
  const r = await exec(bin, args, { env: env(), timeout: 120_000 }).then(
    (ok) => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  return { ...r, ms: Date.now() - t0 };
}

/** The queue's one worker: a test that kills it leaves no other to answer for it. */
let worker: WorkerProcess | null = null;
const killWorker = async () => {
  await worker?.kill();
  worker = null;
};
const startWorker = async (approvers: boolean) => {
  await killWorker();
  worker = await startWorkerProcess({ taskQueue: h.taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, ...(approvers ? { env: { AGENT_APPROVERS: policyFile } } : {}) });
};

afterAll(async () => {
  await killWorker();
});

/** A run of `destructive` parked on c2 (delete_file), started by the CLI; its status. */
async function parked(id: string) {
  const r = await cli(['run', '--model', 'destructive', '--workspace', freshWorkspace(), '--id', id, '--detach']);
  expect(r.code, r.stderr).toBe(0);
  return waitForApproval(h.client.workflow.getHandle(id), 'c2');
}

/** The decisions the run took on c2 and the ones it refused, from its trace. */
function decisions(id: string) {
  const lines = h.trace(id);
  return {
    applied: lines.filter((l) => l.type === 'approval_decided' && l.callId === 'c2'),
    refused: lines.filter((l) => l.type === 'signal_ignored' && l.callId === 'c2'),
  };
}

const pendingLine = (what: string, id: string, signal: string) =>
  new RegExp(`^recorded ${what} for ${id} as the ${signal} signal, pending: no worker took it within 5 s \\(task queue ${h.taskQueue}\\); the run applies or refuses it when a worker takes the run \\(see its trace\\)\\n$`);

describe('a decision right after the run\'s worker was SIGKILLed', () => {
  it('approve is recorded, pending (exit 9, within seconds); a reject after it too; a new worker applies the approve alone', { timeout: 300_000 }, async () => {
    await startWorker(false);
    const id = `dnw-a-${freshWorkspace()}`;
    await parked(id);
    await killWorker();
    // The server still lists the dead worker's poller: the case the CLI used to answer with "may".
    expect((await queueWorkers(h.client, h.taskQueue)).polling).toBe(true);

    const approve = await cli(['approve', id, 'c2', '--by', 'alice']);
    expect(approve.code, approve.stderr).toBe(RECORDED_PENDING);
    expect(approve.ms).toBeLessThan(ANSWERS_WITHIN_MS);
    expect(approve.stderr).toBe('');
    expect(approve.stdout).toMatch(pendingLine('approve c2', id, 'approve'));
    expect(isDocumented(approve.stdout)).toBe(true);
    expect(approve.stdout).not.toMatch(/may/);

    // A second operator's opposite word, also while no worker takes the run.
    const reject = await cli(['reject', id, 'c2', '--by', 'bob', '--reason', 'keep it']);
    expect(reject.code, reject.stderr).toBe(RECORDED_PENDING);
    expect(reject.stdout).toMatch(pendingLine('reject c2', id, 'reject'));

    await startWorker(false);
    const result = await h.client.workflow.getHandle(id).result();
    // The outcome printed first (approve, alice) is the one that holds; bob's is refused on record.
    expect(result).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    const { applied, refused } = decisions(id);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ decision: 'approve', by: 'alice' });
    expect(refused.length).toBeGreaterThanOrEqual(1);
  });

  it('raced against the kill and a new worker: one definite answer, one decision applied, the printed one', { timeout: 300_000 }, async () => {
    await startWorker(false);
    const id = `dnw-r-${freshWorkspace()}`;
    await parked(id);
    await killWorker();
    // The approve and a new worker's start race: it may take the update (approved) or not in time (recorded, pending).
    const [approve] = await Promise.all([cli(['approve', id, 'c2', '--by', 'alice']), startWorker(false)]);
    expect([0, RECORDED_PENDING], approve.stderr).toContain(approve.code);
    expect(approve.ms).toBeLessThan(ANSWERS_WITHIN_MS * 2);
    if (approve.code === 0) expect(approve.stdout).toMatch(new RegExp(`^approved c2 on ${id}; run is now`));
    else expect(approve.stdout).toMatch(pendingLine('approve c2', id, 'approve'));
    // A reject after the approve's answer: refused now (the call is decided, or the run already ended) or recorded and then refused by the run.
    const reject = await cli(['reject', id, 'c2', '--by', 'bob']);
    expect([1, ALREADY_FINISHED, RECORDED_PENDING], reject.stdout + reject.stderr).toContain(reject.code);
    const result = await h.client.workflow.getHandle(id).result();
    expect(result).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    const { applied } = decisions(id);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ decision: 'approve', by: 'alice' });
  });

  it('a signed approve (AGENT_APPROVERS, --key) is recorded as the signed signal and applies when a worker returns', { timeout: 300_000 }, async () => {
    await startWorker(true);
    const id = `dnw-s-${freshWorkspace()}`;
    const status = await parked(id);
    const parkedOn = status.interruption;
    if (parkedOn?.type !== 'approval' || parkedOn.callKey === undefined) throw new Error('parked without a callKey');
    await killWorker();
    // No worker answers the status query: the call's argsHash, callKey and tool are given, as the docs say.
    const approve = await cli(['approve', id, 'c2', '--by', 'alice', '--key', aliceKey, '--args-hash', parkedOn.argsHash ?? '', '--call-key', parkedOn.callKey, '--tool', 'delete_file']);
    expect(approve.code, approve.stderr).toBe(RECORDED_PENDING);
    expect(approve.ms).toBeLessThan(ANSWERS_WITHIN_MS);
    expect(approve.stdout).toMatch(pendingLine('approve c2', id, 'approve'));
    await startWorker(true);
    const result = await h.client.workflow.getHandle(id).result();
    expect(result).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    const { applied } = decisions(id);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ decision: 'approve', by: 'alice' });
  });
});
