// Attacks on retention (issue 33, item 5): a worker of another namespace that
// shares the workspace (the ledger folder, TRACE_DIR, the message store) sweeps
// on its own schedule. It must leave namespace A's records, trace and messages
// alone: its server does not know A's workflows ("not found"), which is not
// "forgotten". Before, it removed them, and a reset of A's run then did A's
// write a second time.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderEffectStore } from '../../activities/effects/folder-store.js';
import { PostgresEffectStore } from '../../activities/effects/postgres-store.js';
import type { EffectRecord, EffectStore } from '../../activities/effects/record.js';
import { sweepLedger } from '../../activities/effects/retention.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { sweepTraces } from '../../activities/trace-retention.js';
import { namespaceFolder } from '../../activities/message-store.js';
import { approveSignal, statusQuery, transcriptQuery } from '../../common/run-messages.js';
import { findTemporalCli } from '../../worker/dev-server/temporal-cli.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from '../helpers/harness.js';
import { startWorkerProcess } from '../helpers/worker-process.js';
import type { agentRun } from '../../workflows/index.js';

const exec = promisify(execFile);
const h = useHarness();

/** A second namespace on the suite's dev server, made as an operator makes one. */
async function createNamespace(name: string): Promise<void> {
  await exec(findTemporalCli(), ['operator', 'namespace', 'create', '--namespace', name, '--retention', '24h', '--address', h.address], { timeout: 30_000 });
  await waitFor(`namespace ${name} to be served`, async () => (await h.client.workflowService.describeNamespace({ namespace: name }).then(() => true, () => false)));
}

/** Every message file of a store folder (its two-character shards). */
const messageFiles = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir).filter((s) => /^[A-Za-z0-9_-]{2}$/.test(s)).flatMap((s) => readdirSync(join(dir, s)).map((f) => join(dir, s, f))) : [];

describe('retention in another namespace sharing the workspace', () => {
  it("leaves a parked run's ledger record, trace and messages alone, and a reset of that run does not delete twice", { timeout: 240_000 }, async () => {
    const namespaceB = `team-b-${randomUUID().slice(0, 8)}`;
    await createNamespace(namespaceB);
    const ledger = new FolderEffectStore(join(h.workspaceRoot, '.ledger'));
    const recordsOf = async (workflowId: string) => (await ledger.oldest(Number.POSITIVE_INFINITY, 100_000)).filter((r) => r.workflowId === workflowId);

    // Namespace A (default): its first delete done and recorded, parked on the second: a run parked for days.
    const workspace = freshWorkspace();
    const file = join(h.workspaceRoot, workspace, 'access.log');
    const run = await h.start({ task: 'Delete access.log twice.', model: 'destructive_twice', workspace });
    await waitForApproval(run, 'c1');
    await run.signal(approveSignal, { callId: 'c1', by: 'alice' });
    await waitForApproval(run, 'c2');
    const [record] = await recordsOf(run.workflowId);
    expect(record).toMatchObject({ state: 'done', outcome: { ok: true, content: 'deleted access.log' } });
    const traceLines = h.trace(run.workflowId).length;
    expect(traceLines).toBeGreaterThan(0);
    const messagesA = messageFiles(namespaceFolder(join(h.workspaceRoot, '.messages'), 'default'));
    expect(messagesA.length).toBeGreaterThan(0);

    // Namespace B's worker on the same workspace, trace folder and message store: everything is "old" to it (1 ms), a pass every 300 ms.
    const worker = await startWorkerProcess({
      taskQueue: `retention-b-${randomUUID().slice(0, 8)}`,
      traceDir: h.traceDir,
      workspaceRoot: h.workspaceRoot,
      env: { TEMPORAL_NAMESPACE: namespaceB, AGENT_RETENTION_MAX_AGE_MS: '1', AGENT_RETENTION_INTERVAL_MS: '300', AGENT_RETENTION_LOG: 'passes' },
    });
    try {
      const passes = () => worker.output().split('\n').filter((l) => l.startsWith('retention: ledger ')).length;
      await waitFor("three of namespace B's retention passes", () => passes() >= 3);
    } finally {
      await worker.kill();
    }
    // A's record, trace and messages are all there (soft: the reset below shows the harm either way).
    expect.soft(await recordsOf(run.workflowId)).toEqual([record]);
    expect.soft(h.trace(run.workflowId).length).toBe(traceLines);
    expect.soft(messagesA.filter((f) => !existsSync(f))).toEqual([]);

    // Someone puts a new access.log in; an operator resets A's run to its start.
    writeFileSync(file, 'a new access.log, written after the first delete');
    const { stdout } = await exec(findTemporalCli(), ['workflow', 'reset', '--workflow-id', run.workflowId, '--type', 'FirstWorkflowTask', '--reason', 'operator reset (test)', '--address', h.address, '--output', 'json'], { timeout: 30_000 });
    const resetRunId = (JSON.parse(stdout) as { runId: string }).runId;
    const reset = h.client.workflow.getHandle<typeof agentRun>(run.workflowId, resetRunId);
    h.track(run.workflowId, resetRunId);
    // The reset run asks c1 again: approved, the ledger answers for the first run, and it parks on c2.
    await waitForApproval(reset, 'c1');
    await reset.signal(approveSignal, { callId: 'c1', by: 'bob' });
    await waitForApproval(reset, 'c2');
    expect(readFileSync(file, 'utf8')).toBe('a new access.log, written after the first delete');
    const c1 = (await reset.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 'c1');
    expect(c1?.content).toMatch(new RegExp(`^already deleted by run ${run.firstExecutionRunId} at \\S+ \\(not deleted again\\): deleted access\\.log$`));
    expect((await reset.query(statusQuery)).interruption).toMatchObject({ type: 'approval', callId: 'c2' });
    await reset.terminate('test over');
    // What let B tell: the record names its namespace; B says what it left alone.
    expect(record.namespace).toBe('default');
    expect(worker.output()).toMatch(/retention: ledger \S+ \S+: removed 0 records, .*of other namespaces \(or of older code\) left alone/);
  });
});

describe.each(['folder', 'postgres'] as const)('one ledger pass on the %s store, judged by whose the record is', (kind) => {
  let postgres: TestPostgres | null = null;
  let store: EffectStore;
  beforeAll(async () => {
    if (kind === 'postgres') postgres = await startPostgres();
    store = kind === 'folder' ? new FolderEffectStore(mkdtempSync(join(tmpdir(), 'attack-ledger-'))) : PostgresEffectStore.open((postgres as TestPostgres).url(`ledger_${randomUUID().slice(0, 8)}`));
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await postgres?.stop();
  });

  it('keeps another namespace\'s records and older code\'s (none), and removes its own unknown one only past the server\'s retention', { timeout: 60_000 }, async () => {
    const day = 86_400_000;
    const record = (id: string, namespace: string | null): EffectRecord => ({
      key: `${id}@chain/m1/c1`,
      workflowId: id,
      ...(namespace === null ? {} : { namespace }),
      toolName: 'delete_file',
      state: 'done',
      holder: { runId: 'r', attempt: 1, worker: 'w', token: 't' },
      claimedAt: Date.now() - 2 * day,
      leaseUntil: Date.now() - 2 * day,
      outcome: { ok: true, content: 'deleted access.log' },
      doneAt: Date.now() - 2 * day,
    });
    // Ids this server (namespace default) has never seen: to it, all three are "not found".
    const mine = record(`mine-${randomUUID().slice(0, 8)}`, 'default');
    const theirs = record(`theirs-${randomUUID().slice(0, 8)}`, 'team-a');
    const legacy = record(`legacy-${randomUUID().slice(0, 8)}`, null);
    for (const r of [mine, theirs, legacy]) expect(await store.create(r)).toBe(1);
    const keys = async () => (await store.oldest(Number.POSITIVE_INFINITY, 100)).map((r) => r.key).sort();
    // The namespace is stored and read back.
    expect((await store.read(theirs.key)).found?.record.namespace).toBe('team-a');
    // Retention of 3 days reported by the server: the records were written 2 days ago; everything stays, even over a 1-byte limit.
    const a = await sweepLedger(store, h.client, { maxAgeMs: 1, maxBytes: 1, namespace: 'default', namespaceRetentionMs: 3 * day });
    expect(a).toMatchObject({ removed: 0, keptOthers: 2 });
    expect(await keys()).toEqual([mine.key, theirs.key, legacy.key].sort());
    // The server does not say its retention: unknown stays unknown.
    expect((await sweepLedger(store, h.client, { maxAgeMs: 1, maxBytes: 1, namespace: 'default', namespaceRetentionMs: null })).removed).toBe(0);
    // A retention of 1 day has passed since the last write: its own record goes, the others stay.
    const b = await sweepLedger(store, h.client, { maxAgeMs: 1, maxBytes: null, namespace: 'default', namespaceRetentionMs: day });
    expect(b).toMatchObject({ removed: 1, keptOthers: 2 });
    expect(await keys()).toEqual([theirs.key, legacy.key].sort());
  });
});

describe('one trace pass, judged by whose the file is', () => {
  it('removes only its own namespace\'s files: another namespace\'s and older code\'s (no namespace) stay, even when the ids look closed or unknown to it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attack-trace-retention-'));
    const file = (id: string, namespace: string | null) => {
      const path = join(dir, `${id}.0199b1e2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl`);
      writeFileSync(path, JSON.stringify({ runId: id, workflowId: id, ...(namespace === null ? {} : { namespace }), seq: 1, type: 'run_started' }) + '\n');
      const t = new Date(Date.now() - 3_600_000);
      utimesSync(path, t, t);
      return path;
    };
    const mine = file('mine', 'b');
    const theirs = file('theirs', 'a');
    const legacy = file('legacy', null);
    const unknown = file('unknown', 'b');
    // The sweeper's server: "mine" closed long ago; nothing else known to it.
    const stateOf = async (id: string) => (id === 'mine' ? { running: false as const, closedAt: Date.now() - 3_000_000 } : { running: false as const, closedAt: null });
    const x = await sweepTraces(dir, stateOf, { maxAgeMs: 1, maxBytes: 1, namespace: 'b', namespaceRetentionMs: 24 * 3_600_000 });
    expect([mine, theirs, legacy, unknown].map(existsSync)).toEqual([false, true, true, true]);
    expect(x).toMatchObject({ removed: 1, keptOthers: 2 });
    // Once the server's retention has passed since it was last written, the unknown one is forgotten: it goes.
    await sweepTraces(dir, stateOf, { maxAgeMs: 1, maxBytes: null, namespace: 'b', namespaceRetentionMs: 60_000 });
    expect([theirs, legacy, unknown].map(existsSync)).toEqual([true, true, false]);
  });
});

describe('files the worker keeps beside Temporal', () => {
  it('traces, messages and ledger records are readable by the worker\'s user only (0600 files, 0700 folders)', { timeout: 120_000 }, async () => {
    const run = await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(run, 'c2');
    await run.signal(approveSignal, { callId: 'c2', by: 'alice' });
    expect((await run.result()).status).toBe('completed');
    const mode = (p: string) => statSync(p).mode & 0o777;
    // The trace: the file of this run's chain.
    const traces = readdirSync(h.traceDir).filter((f) => f.startsWith(`${run.workflowId}.`) && f.endsWith('.jsonl'));
    expect(traces).toHaveLength(1);
    expect(mode(join(h.traceDir, traces[0]))).toBe(0o600);
    expect(mode(h.traceDir)).toBe(0o700);
    // The message store: this namespace's folder, its shards and files.
    const store = namespaceFolder(join(h.workspaceRoot, '.messages'), 'default');
    const files = messageFiles(store);
    expect(files.length).toBeGreaterThan(0);
    expect([...new Set(files.map(mode))]).toEqual([0o600]);
    expect([...new Set(files.map((f) => mode(join(f, '..'))))]).toEqual([0o700]);
    expect(mode(store)).toBe(0o700);
    // The ledger: the record's version file and its folders.
    const ledgerDir = join(h.workspaceRoot, '.ledger');
    const keyDirs = readdirSync(ledgerDir).filter((s) => /^[0-9a-f]{2}$/.test(s)).flatMap((s) => readdirSync(join(ledgerDir, s)).map((k) => join(ledgerDir, s, k)));
    expect(keyDirs.length).toBeGreaterThan(0);
    expect([...new Set(keyDirs.map(mode))]).toEqual([0o700]);
    expect([...new Set(keyDirs.flatMap((d) => readdirSync(d).map((f) => mode(join(d, f)))))]).toEqual([0o600]);
    expect(mode(ledgerDir)).toBe(0o700);
  });
});
