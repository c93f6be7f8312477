// Notifications of runs parked on a person (docs/operations.md,
// "Notifications"), received by a real HTTP receiver in this process: a run
// that parks posts the contract's fields within seconds with an
// Idempotency-Key; a receiver that answers 500 gets the same key again until
// it answers 2xx; a worker killed between the send and the 2xx delivers again
// with the same key once a worker is back; escalation; payload keys; budget
// and reconciliation parkings.
import { Client, Connection } from '@temporalio/client';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approveSignal, cancelSignal, decideUpdate, reconcileUpdate, statusQuery } from '../common/run-messages.js';
import type { AgentInput } from '../common/contract.js';
import { dataConverter } from '../node/payload-codec.js';
import type { PayloadKey } from '../node/payload-keys.js';
import { loadWorkerTools, type WorkerTools } from '../worker/toolset.js';
import type { agentRun } from '../workflows/index.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { writeStallingFsConfig } from './mcp/stalling-config.js';
import { startReceiver, type Delivery, type Receiver } from './helpers/webhook-receiver.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';

// The encrypted run below is started by a client of its own, which the file's replay could not read: only the runs h.client started replay.
const h = useHarness({ worker: false, replayQueues: false });
const task = 'Which file mentions a timeout?';
const INBOX = 'https://ops.example/inbox';
let r: Receiver;
let worker: { shutdown(): Promise<void> };

beforeAll(async () => {
  r = await startReceiver();
  worker = await h.startWorker({
    notify: {
      routes: [
        { url: `${r.url}/json` },
        { url: `${r.url}/slack`, format: 'slack', events: ['approval_escalated'] },
      ],
      inboxUrl: INBOX,
    },
  });
});

afterAll(async () => {
  await worker?.shutdown();
  await r?.close();
});

const deliveriesOf = (id: string, path = '/json', event?: string) => r.of(id).filter((d) => d.path === path && (event === undefined || d.body.event === event));
const delivered = (id: string, event: string, n = 1, path = '/json') =>
  waitFor(`${n} ${event} deliveries for ${id} on ${path}`, () => {
    const ds = deliveriesOf(id, path, event);
    return ds.length >= n ? ds : null;
  }, 60_000);
const traceSeq = (id: string, type: string) => h.trace(id).find((l) => l.type === type)?.seq;

describe('a run parked on an approval', () => {
  it('posts approval_required with the contract\'s fields and its Idempotency-Key within seconds, and nothing more once decided', async () => {
    const handle = await h.start({ task, model: 'destructive', workspace: freshWorkspace() });
    const parked = await waitForApproval(handle, 'c2');
    const [d] = await delivered(handle.workflowId, 'approval_required');
    expect(d.body).toMatchObject({
      event: 'approval_required',
      workflowId: handle.workflowId,
      callId: 'c2',
      toolName: 'delete_file',
      argsHash: parked.interruption?.type === 'approval' ? parked.interruption.argsHash : 'missing',
      expiresAt: null,
      inboxUrl: `${INBOX}?run=${encodeURIComponent(handle.workflowId)}`,
      args: { path: 'access.log' },
    });
    expect(d.headers['content-type']).toBe('application/json');
    expect(d.key).toBe(`${handle.workflowId}@${handle.firstExecutionRunId}/${traceSeq(handle.workflowId, 'approval_required')}/approval_required`);
    // Within seconds of the parking (workflow time), on a loaded machine.
    expect(d.at - Date.parse(String(d.body.parkedAt))).toBeLessThan(10_000);

    await handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'alice' }] });
    expect((await handle.result()).status).toBe('completed');
    expect(r.of(handle.workflowId)).toHaveLength(1);
  });

  it('a receiver answering 500 twice then 200 gets 3 deliveries with the same key, then no more', async () => {
    const id = `notify-500-${randomUUID().slice(0, 8)}`;
    r.answer((d, nth) => (d.body.workflowId === id && nth <= 2 ? 500 : 200));
    try {
      const handle = await h.start({ task, model: 'destructive', workspace: freshWorkspace() }, id);
      const ds = await delivered(id, 'approval_required', 3);
      expect(new Set(ds.map((d) => d.key)).size).toBe(1);
      expect(ds.map((d) => d.body)).toEqual([ds[0].body, ds[0].body, ds[0].body]);
      // The run parked before any 2xx: the notification never held it.
      expect((await handle.query(statusQuery)).agentStatus).toBe('awaiting_approval');
      await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
      expect((await handle.result()).status).toBe('completed');
      expect(deliveriesOf(id)).toHaveLength(3);
    } finally {
      r.answer(() => 200);
    }
  });

  it('limits.approvalEscalateAfterMs: a call still parked posts approval_escalated (JSON and the Slack route for that event), with its own key', async () => {
    const handle = await h.start({ task, model: 'destructive', workspace: freshWorkspace(), approvalTimeoutMs: 120_000, limits: { maxTurns: 10, approvalEscalateAfterMs: 1500 } });
    const [required] = await delivered(handle.workflowId, 'approval_required');
    const [escalated] = await delivered(handle.workflowId, 'approval_escalated');
    const [slack] = await waitFor('the Slack route\'s delivery', () => {
      const s = r.of(handle.workflowId).filter((d) => d.path === '/slack');
      return s.length ? s : null;
    }, 60_000);
    expect(escalated.body).toMatchObject({ event: 'approval_escalated', callId: 'c2', toolName: 'delete_file', expiresAt: required.body.expiresAt });
    expect(Date.parse(String(required.body.expiresAt)) - Date.parse(String(required.body.parkedAt))).toBe(120_000);
    expect(escalated.key).toBe(required.key.replace(/approval_required$/, 'approval_escalated'));
    expect(escalated.at - Date.parse(String(required.body.parkedAt))).toBeGreaterThanOrEqual(1500);
    // Slack's incoming-webhook shape, with the same key.
    expect(slack.key).toBe(escalated.key);
    expect(slack.body.text).toContain(handle.workflowId);
    expect(slack.body.text).toContain('escalated');
    expect(Array.isArray(slack.body.blocks)).toBe(true);
    expect(JSON.stringify(slack.body.blocks)).toContain('access.log');
    // approval_required went to the JSON route only (the Slack route takes approval_escalated only).
    expect(r.of(handle.workflowId).filter((d) => d.path === '/slack')).toHaveLength(1);
    expect(h.trace(handle.workflowId).some((l) => l.type === 'approval_escalated')).toBe(true);
    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    expect((await handle.result()).status).toBe('completed');
  });

  it('decided before the escalation time: the timer is cancelled and approval_escalated is never sent', async () => {
    const handle = await h.start({ task, model: 'destructive', workspace: freshWorkspace(), limits: { maxTurns: 10, approvalEscalateAfterMs: 60_000 } });
    await delivered(handle.workflowId, 'approval_required');
    await handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'reject', reason: 'no', by: 'bob' }] });
    expect((await handle.result()).status).toBe('completed');
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    expect(events.some((e) => e.timerCanceledEventAttributes)).toBe(true);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'notifyParked')).toHaveLength(1);
    expect(h.trace(handle.workflowId).some((l) => l.type === 'approval_escalated')).toBe(false);
  });
});

describe('payload keys', () => {
  const KEYS: PayloadKey[] = [{ id: 'k-notify', key: new Uint8Array(randomBytes(32)) }];
  let encrypting: { taskQueue: string; shutdown(): Promise<void> };
  let client: Client;

  beforeAll(async () => {
    encrypting = await h.startWorker({ taskQueue: `notify-keys-${randomUUID().slice(0, 8)}`, payloadKeys: KEYS, notify: { routes: [{ url: `${r.url}/json` }, { url: `${r.url}/slack`, format: 'slack' }] } });
    client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }), dataConverter: dataConverter({ payloadKeys: KEYS }) });
  });
  afterAll(async () => {
    await encrypting?.shutdown();
    await client?.connection.close();
  });

  it('with payload keys set, no argument leaves in clear: no args in the JSON body nor in the Slack message', async () => {
    const id = `notify-keys-${randomUUID().slice(0, 8)}`;
    const handle = await client.workflow.start<typeof agentRun>('agentRun', { taskQueue: encrypting.taskQueue, workflowId: id, args: [{ task, model: 'destructive', workspace: freshWorkspace() }] });
    const [d] = await delivered(id, 'approval_required');
    const [slack] = await waitFor('the Slack delivery', () => {
      const s = r.deliveries.filter((x) => x.path === '/slack' && String(x.body.text).includes(id));
      return s.length ? s : null;
    }, 60_000);
    expect(d.body).toMatchObject({ event: 'approval_required', workflowId: id, callId: 'c2', toolName: 'delete_file' });
    expect(d.body).not.toHaveProperty('args');
    for (const x of [d, slack]) expect(JSON.stringify(x.body)).not.toContain('access.log');
    await handle.signal(cancelSignal, { reason: 'test done' });
    expect((await handle.result()).status).toBe('interrupted');
  });
});

describe('budget and reconciliation parkings', () => {
  it('a hard budget parked on its next call posts budget_required (no call), and a Stop ends the run', async () => {
    const handle = await h.start({ task, model: 'plan', limits: { maxTurns: 10, maxBudgetUsd: 0.004, budgetMode: 'hard', minReplyTokens: 256 }, budgetTimeoutMs: 600_000 });
    const [d] = await delivered(handle.workflowId, 'budget_required');
    expect(d.body).toMatchObject({ event: 'budget_required', workflowId: handle.workflowId, callId: null, toolName: null, argsHash: null, inboxUrl: `${INBOX}?run=${encodeURIComponent(handle.workflowId)}` });
    expect(Date.parse(String(d.body.expiresAt)) - Date.parse(String(d.body.parkedAt))).toBe(600_000);
    expect(d.key).toBe(`${handle.workflowId}@${handle.firstExecutionRunId}/${traceSeq(handle.workflowId, 'budget_awaited')}/budget_required`);
    expect((await handle.query(statusQuery)).agentStatus).toBe('awaiting_budget');
    await handle.signal(cancelSignal, { reason: 'test done' });
    expect((await handle.result()).status).toBe('interrupted');
  });

  describe('a write whose outcome is unknown, unknownOutcomes "ask"', () => {
    const { config } = writeStallingFsConfig(mkdtempSync(join(tmpdir(), 'notify-reconcile-')));
    let tools: WorkerTools;
    let w: { taskQueue: string; shutdown(): Promise<void> };
    beforeAll(async () => {
      tools = await loadWorkerTools({ toolModules: [], toolNames: null, mcpConfigPath: config });
      w = await h.startWorker({ taskQueue: `notify-rec-${randomUUID().slice(0, 8)}`, toolset: tools.toolset, notify: { routes: [{ url: `${r.url}/json`, tools: ['fs_write'] }] } });
    });
    afterAll(async () => {
      await w?.shutdown();
      await tools?.close();
    });

    it('posts approval_required then reconciliation_required for the write (the route takes fs_write only), each with its own key', async () => {
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue: w.taskQueue,
        workflowId: `notify-rec-${randomUUID().slice(0, 8)}`,
        args: [{ task: 'Write the report.', model: 'mcp', tools: ['fs_list', 'fs_write', 'fs_slow'], workspace: freshWorkspace(), toolTimeoutMs: 4000, unknownOutcomes: 'ask' } satisfies AgentInput],
      });
      const [approval] = await delivered(handle.workflowId, 'approval_required');
      expect(approval.body).toMatchObject({ callId: 'c2', toolName: 'fs_write' });
      await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
      const [d] = await delivered(handle.workflowId, 'reconciliation_required');
      expect(d.body).toMatchObject({ event: 'reconciliation_required', workflowId: handle.workflowId, callId: 'c2', toolName: 'fs_write', argsHash: approval.body.argsHash });
      expect(d.key).not.toBe(approval.key);
      await handle.executeUpdate(reconcileUpdate, { args: [{ callId: 'c2', outcome: 'happened', result: 'written', by: 'bob' }] });
      await handle.signal(cancelSignal, { reason: 'test done' });
      expect((await handle.result()).status).toBe('interrupted');
      // Only fs_write's parkings were announced.
      expect(r.of(handle.workflowId).map((x) => x.body.event)).toEqual(['approval_required', 'reconciliation_required']);
    });
  });
});

describe('a worker killed between the send and the 2xx', () => {
  const procs: WorkerProcess[] = [];
  afterAll(async () => {
    for (const p of procs) await p.kill();
  });

  it('delivers again with the same key once a new worker starts; every event delivered, repeats only with their key', async () => {
    const taskQueue = `notify-crash-${randomUUID().slice(0, 8)}`;
    const workspaceRoot = mkdtempSync(join(tmpdir(), 'notify-crash-ws-'));
    const opts = { taskQueue, traceDir: h.traceDir, workspaceRoot, env: { AGENT_NOTIFY_URL: `${r.url}/crash`, AGENT_OPS_URL: INBOX } };
    const id = `notify-crash-${randomUUID().slice(0, 8)}`;
    // The first delivery is held open: the worker sent it and never got its answer.
    r.answer((d, nth) => (d.path === '/crash' && d.body.workflowId === id && d.body.event === 'approval_required' && nth === 1 ? 'hold' : 200));
    try {
      const first = await startWorkerProcess(opts);
      procs.push(first);
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue,
        workflowId: id,
        args: [{ task, model: 'destructive', workspace: 'ws', limits: { maxTurns: 10, approvalEscalateAfterMs: 25_000 } } satisfies AgentInput],
      });
      const [sent] = await delivered(id, 'approval_required', 1, '/crash');
      await waitFor('the held delivery', () => r.held() > 0 || null);
      await first.kill();
      const second = await startWorkerProcess(opts);
      procs.push(second);
      const again = await delivered(id, 'approval_required', 2, '/crash');
      expect(again.map((d) => d.key)).toEqual([sent.key, sent.key]);
      expect(again[1].body).toEqual(sent.body);
      // The escalation timer survived the crash too (the new worker fires it).
      const [esc] = await delivered(id, 'approval_escalated', 1, '/crash');
      expect(esc.key).toBe(sent.key.replace(/approval_required$/, 'approval_escalated'));
      await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
      expect((await handle.result()).status).toBe('completed');
      const all: Delivery[] = r.of(id);
      const keysByEvent = new Map<unknown, Set<string>>();
      for (const d of all) keysByEvent.set(d.body.event, (keysByEvent.get(d.body.event) ?? new Set()).add(d.key));
      expect([...keysByEvent.keys()].sort()).toEqual(['approval_escalated', 'approval_required']);
      for (const keys of keysByEvent.values()) expect(keys.size).toBe(1);
    } finally {
      r.answer(() => 200);
      r.release();
    }
  }, 180_000);
});
