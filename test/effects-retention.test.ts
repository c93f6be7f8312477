// Retention of the effect ledger, the traces and the message store, applied
// by a real worker process on its own schedule (AGENT_RETENTION_INTERVAL_MS),
// and passes driven directly for the size limits. A closed run's records and
// trace go once it has been closed longer than the maximum age; a running
// run keeps its records and trace whatever their age or the size; messages
// (a cache) go when unused, and a run that needed them sends them inline; a
// run started after a cleanup loses nothing.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { FolderEffectStore } from '../activities/effects/folder-store.js';
import type { EffectRecord } from '../activities/effects/record.js';
import { sweepLedger } from '../activities/effects/retention.js';
import { namespaceRetentionMs } from '../activities/workflow-state.js';
import { MessageStore, TOUCH_EVERY_MS } from '../activities/message-store.js';
import { sweepMessages } from '../activities/message-retention.js';
import { sweepTraces, traceWorkflowId } from '../activities/trace-retention.js';
import { approveSignal, transcriptQuery } from '../common/run-messages.js';
import type { AgentInput } from '../common/contract.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { startWorkerProcess } from './helpers/worker-process.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });

const recordsOf = async (store: FolderEffectStore, workflowId: string) => (await store.oldest(Number.POSITIVE_INFINITY, 100_000)).filter((r) => r.workflowId === workflowId);
const sweeps = (output: string) => output.split('\n').filter((l) => l.startsWith('retention: ledger '));

describe('ledger retention, applied by the worker', () => {
  it('removes a closed run\'s records, never a running run\'s, and a run started after the cleanup loses nothing', { timeout: 240_000 }, async () => {
    const workspaceRoot = mkdtempSync(join(tmpdir(), 'retention-'));
    const taskQueue = `retention-${randomUUID().slice(0, 8)}`;
    // Every closed run is "old" at once; a pass every 300 ms.
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot, env: { AGENT_RETENTION_MAX_AGE_MS: '1', AGENT_RETENTION_INTERVAL_MS: '300', AGENT_RETENTION_LOG: 'passes' } });
    const store = new FolderEffectStore(join(workspaceRoot, '.ledger'));
    const start = (input: AgentInput) => h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `retention-${randomUUID().slice(0, 8)}`, args: [input] });
    const approve = async (handle: WorkflowHandle, callId: string) => {
      await waitForApproval(handle, callId);
      await handle.signal(approveSignal, { callId, by: 'alice' });
    };
    try {
      // In flight: its first delete done (one record), parked on its second.
      const running = await start({ task: 'Delete access.log twice.', model: 'destructive_twice', workspace: freshWorkspace() });
      await approve(running, 'c1');
      await waitForApproval(running, 'c2');
      const [kept] = await recordsOf(store, running.workflowId);
      expect(kept).toMatchObject({ state: 'done', outcome: { ok: true, content: 'deleted access.log' } });

      // Closed: one delete, then the run ends.
      const closed = await start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
      await approve(closed, 'c2');
      // Its trace, kept while it runs (and removed by a pass soon after it closes).
      await waitFor('the closed run\'s delete in its trace', () => h.trace(closed.workflowId).some((l) => l.type === 'tool_start' && l.callId === 'c2'));
      expect((await closed.result()).status).toBe('completed');

      // The worker's passes remove the closed run's record and trace…
      await waitFor('the closed run\'s record to be removed', async () => (await recordsOf(store, closed.workflowId)).length === 0);
      await waitFor('the closed run\'s trace to be removed', () => h.trace(closed.workflowId).length === 0);
      // …and, two passes later still, the running run's are there (older than the maximum age too).
      const passes = sweeps(worker.output()).length;
      await waitFor('two more retention passes', () => sweeps(worker.output()).length >= passes + 2);
      expect(await recordsOf(store, running.workflowId)).toEqual([kept]);
      expect(h.trace(running.workflowId).some((l) => l.type === 'approval_required')).toBe(true);
      expect(sweeps(worker.output()).at(-1)).toMatch(/removed \d+ records, \d+ left \(\d+ bytes\), 1 of running workflows kept \(max age 1 ms\)$/);
      expect(worker.output()).toMatch(/retention: traces \S+: removed \d+ files, \d+ left \(\d+ bytes\), 1 of running workflows kept/);
      // The message store is a cache: unused for 1 ms, the running run's messages went too.
      expect(worker.output()).toMatch(/retention: messages \S+: removed [1-9]\d* files/);

      // The running run goes on: its second delete finds no file (the first did delete it), and its next
      // prompt, whose messages the store no longer holds, is sent inline: it ends as it would have.
      await running.signal(approveSignal, { callId: 'c2', by: 'alice' });
      expect(await running.result()).toMatchObject({ status: 'completed', output: 'Deleted access.log.', turns: 3 });

      // A run started after the cleanup: its write is claimed, done and reported as usual.
      const later = await start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
      await approve(later, 'c2');
      expect((await later.result()).output).toBe('Deleted access.log to free space.');
      const c2 = (await later.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 'c2');
      expect(c2?.content).toBe('deleted access.log');
    } finally {
      await worker.kill();
    }
  });
});

describe('trace and message retention, one pass', () => {
  it('a trace file is named by its workflow id (dots and child ids too); by size, the least recently written closed ones go first', async () => {
    expect(traceWorkflowId('plan-1a2b.0199b1e2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl')).toBe('plan-1a2b');
    expect(traceWorkflowId('v1.2.release.0199b1e2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl')).toBe('v1.2.release');
    expect(traceWorkflowId(`${encodeURIComponent('parent/child-r1')}.0199b1e2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl`)).toBe('parent/child-r1');
    expect(traceWorkflowId('old-run.jsonl')).toBe('old-run');
    expect(traceWorkflowId('notes.txt')).toBeNull();

    const dir = mkdtempSync(join(tmpdir(), 'trace-retention-'));
    const file = (id: string, secondsAgo: number) => {
      const path = join(dir, `${id}.0199b1e2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl`);
      // A first line naming the sweeper's namespace (the files it judges), padded to 100 bytes.
      const line = JSON.stringify({ runId: id, workflowId: id, namespace: 'default', seq: 1, type: 'run_started' });
      writeFileSync(path, `${line}${' '.repeat(99 - line.length)}\n`);
      const t = new Date(Date.now() - secondsAgo * 1000);
      utimesSync(path, t, t);
    };
    file('running', 40);
    file('closed-old', 30);
    file('closed-new', 20);
    const states = { running: { running: true }, 'closed-old': { running: false, closedAt: Date.now() - 30_000 }, 'closed-new': { running: false, closedAt: Date.now() - 20_000 } } as const;
    const stateOf = async (id: string) => states[id as keyof typeof states];
    // By age (25 s): only the closed one closed before it.
    expect(await sweepTraces(dir, stateOf, { maxAgeMs: 25_000, maxBytes: null, namespace: 'default', namespaceRetentionMs: null })).toEqual({ removed: 1, files: 2, bytes: 200, keptInFlight: 1, keptOthers: 0 });
    // By size: the running one is the oldest, yet stays.
    expect(await sweepTraces(dir, stateOf, { maxAgeMs: 3_600_000, maxBytes: 150, namespace: 'default', namespaceRetentionMs: null })).toEqual({ removed: 1, files: 1, bytes: 100, keptInFlight: 1, keptOthers: 0 });
    expect(readdirSync(dir)).toEqual(['running.0199b1e2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl']);
  });

  it('messages go when unused for the maximum age or, past the size limit, least recently used first; using one keeps it', async () => {
    const store = new MessageStore(mkdtempSync(join(tmpdir(), 'message-retention-')));
    const refs = await Promise.all(['"a"', '"b"', '"c"'].map((t) => store.put(t)));
    const age = (ref: string, secondsAgo: number) => {
      const t = new Date(Date.now() - secondsAgo * 1000);
      utimesSync(join(store.dir, ref.slice(0, 2), `${ref}.json`), t, t);
    };
    age(refs[0], 3 * TOUCH_EVERY_MS / 1000);
    age(refs[1], 2 * TOUCH_EVERY_MS / 1000);
    age(refs[2], 10);
    // Read from another process's store: the read refreshes the file's time.
    expect(await new MessageStore(store.dir).get(refs[0])).toBe('"a"');
    await waitFor('the touch', () => statSync(join(store.dir, refs[0].slice(0, 2), `${refs[0]}.json`)).mtimeMs > Date.now() - 60_000);
    expect(await sweepMessages(store.dir, { maxAgeMs: TOUCH_EVERY_MS, maxBytes: null })).toMatchObject({ removed: 1, files: 2 });
    expect(await new MessageStore(store.dir).get(refs[1])).toBeNull();
    expect(await sweepMessages(store.dir, { maxAgeMs: TOUCH_EVERY_MS, maxBytes: 3 })).toMatchObject({ removed: 1, files: 1, bytes: 3 });
    expect(await new MessageStore(store.dir).get(refs[0])).toBe('"a"');
  });
});

describe('ledger retention, one pass', () => {
  it('by size: the oldest records of closed or forgotten workflows go first, a running workflow\'s never, an unknown one\'s only past the namespace\'s retention', { timeout: 120_000 }, async () => {
    const worker = await h.startWorker({ taskQueue: `retention-size-${randomUUID().slice(0, 8)}` });
    const store = new FolderEffectStore(mkdtempSync(join(tmpdir(), 'retention-size-')));
    try {
      // A running workflow (parked on its delete) and a closed one, both real.
      const running = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: worker.taskQueue, workflowId: `size-running-${randomUUID().slice(0, 8)}`, args: [{ task: 'x', model: 'destructive', workspace: freshWorkspace() }] });
      await waitForApproval(running, 'c2');
      const closed = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: worker.taskQueue, workflowId: `size-closed-${randomUUID().slice(0, 8)}`, args: [{ task: 'x', model: 'plan', workspace: freshWorkspace() }] });
      await closed.result();
      const t0 = Date.now() - 60_000;
      const record = (workflowId: string, i: number): EffectRecord => ({
        key: `${workflowId}@chain/m${i}/c${i}`,
        workflowId,
        namespace: 'default',
        toolName: 'delete_file',
        state: 'done',
        holder: { runId: 'r', attempt: 1, worker: 'w', token: 't' },
        claimedAt: t0 + i,
        leaseUntil: t0 + i,
        outcome: { ok: true, content: 'deleted access.log' },
        doneAt: t0 + i,
      });
      // Oldest first: the running workflow's, then a workflow the server never knew (or forgot), then the closed one's.
      const records = [record(running.workflowId, 1), record('forgotten-by-the-server', 2), record(closed.workflowId, 3), record(closed.workflowId, 4)];
      for (const r of records) expect(await store.create(r)).toBe(1);
      const one = (await store.size()).bytes / 4;

      // Room for two records: the two oldest removable ones go (the forgotten and the older closed one).
      // The server reports a retention of 30 s: the record of a workflow it does not know, last written a minute ago, goes as forgotten.
      const ns = { namespace: 'default', namespaceRetentionMs: 30_000 };
      const a = await sweepLedger(store, h.client, { maxAgeMs: 365 * 86_400_000, maxBytes: Math.ceil(one * 2.5), batch: 2, ...ns });
      expect(a.removed).toBeGreaterThanOrEqual(2);
      expect((await store.oldest(Number.POSITIVE_INFINITY, 10)).map((r) => r.key)).toContain(records[0].key);
      expect((await store.oldest(Number.POSITIVE_INFINITY, 10)).map((r) => r.key)).not.toContain(records[1].key);
      // No room at all: everything removable goes; the running workflow's record stays, over the limit.
      const b = await sweepLedger(store, h.client, { maxAgeMs: 365 * 86_400_000, maxBytes: 1, ...ns });
      expect((await store.oldest(Number.POSITIVE_INFINITY, 10)).map((r) => r.key)).toEqual([records[0].key]);
      expect(b).toMatchObject({ keptInFlight: 1, size: { records: 1 } });
      // A workflow the server does not know, last written within the namespace's retention: unknown, kept.
      const unknown = { ...record('never-seen-by-this-server', 5), claimedAt: Date.now(), doneAt: Date.now() };
      expect(await store.create(unknown)).toBe(1);
      await sweepLedger(store, h.client, { maxAgeMs: 1, maxBytes: 1, namespace: 'default', namespaceRetentionMs: 3_600_000 });
      expect((await store.oldest(Number.POSITIVE_INFINITY, 10)).map((r) => r.key)).toEqual([records[0].key, unknown.key]);
      // The default maximum age is the namespace's retention, read from the server.
      expect(await namespaceRetentionMs(h.client, 'default')).toBeGreaterThan(0);
    } finally {
      await worker.shutdown();
    }
  });
});
