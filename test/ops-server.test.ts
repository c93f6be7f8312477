// The ops server's API against real runs: a worker with AGENT_APPROVERS, runs
// parked on delete_file, the server reading them from visibility, forwarding
// decisions signed with alice's key (client/signing.ts, as the page signs) as
// the decide update, and listing every decision taken from the histories.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argsHash } from '../common/args-hash.js';
import type { AgentInput, RunStatusView } from '../common/contract.js';
import { raiseBudgetUpdate, statusQuery, steerSignal, steerUpdate } from '../common/run-messages.js';
import { newKeyPair, type ApproverPolicy } from '../common/signed-decision.js';
import { main } from '../client/cli.js';
import { auditDecisions, type AuditLine } from '../client/ops-audit.js';
import { startOpsServer, type AwaitingItem, type OpsServer } from '../client/ops-server.js';
import { signCall } from '../client/signing.js';
import type { agentRun } from '../workflows/index.js';
import { freshWorkspace, marker, useHarness, waitFor, waitForApproval } from './helpers/harness.js';

const h = useHarness();
const alice = newKeyPair();
const policy: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_file: ['alice'] } };
const ARGS_HASH = argsHash({ path: 'access.log' });
const TOKEN = `ops-${randomUUID()}`;
const queue = `ops-${randomUUID().slice(0, 8)}`;
let ops: OpsServer;
let worker: { shutdown(): Promise<void> };
const started = new Date(Date.now() - 1000);

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${ops.url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers ?? {}) } });

beforeAll(async () => {
  worker = await h.startWorker({ taskQueue: queue, runDefaults: { approvers: policy } });
  ops = await startOpsServer(0, '127.0.0.1', { client: h.client, token: TOKEN, approvers: policy });
});
afterAll(async () => {
  await ops?.close();
  await worker?.shutdown();
});

async function parked(extra: Partial<AgentInput> = {}, prefix = 'ops') {
  const ws = freshWorkspace();
  const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: `${prefix}-${ws}`, args: [{ task: 'Delete the old logs.', model: 'destructive', workspace: ws, ...extra }] });
  const status = await waitForApproval(handle, 'c2');
  return { handle, status };
}

/** What the page sends: the decide body signed by alice over the parked call. */
function signedBody(workflowId: string, status: RunStatusView, decision: 'approve' | 'reject' = 'approve') {
  const i = status.interruption;
  if (i?.type !== 'approval' || !i.callKey) throw new Error('not parked');
  return { callId: i.callId, decision, by: 'alice', ...signCall({ workflowId, callId: i.callId, callKey: i.callKey, toolName: i.toolName, decision, argsHash: i.argsHash, by: 'alice', key: alice.privateKey }) };
}

async function awaitingOnQueue(query = ''): Promise<AwaitingItem[]> {
  const r = await api(`/api/awaiting?taskQueue=${queue}${query}`);
  expect(r.status).toBe(200);
  return (await r.json()) as AwaitingItem[];
}

describe('the ops server API', { timeout: 240_000 }, () => {
  const decided: { workflowId: string; decision: 'approve' | 'reject' }[] = [];

  it('lists every run parked on a person with its call, argsHash, expiry and who may approve; filters and pages', async () => {
    const a = await parked();
    const b = await parked({ approvalTimeoutMs: 600_000 });
    const c = await parked();
    const ids = [a, b, c].map((r) => r.handle.workflowId);
    const items = await waitFor('the three parked runs in visibility', async () => {
      const all = await awaitingOnQueue();
      return ids.every((id) => all.some((i) => i.workflowId === id)) ? all : null;
    });
    const itemB = items.find((i) => i.workflowId === b.handle.workflowId);
    expect(itemB).toMatchObject({ callId: 'c2', toolName: 'delete_file', argsHash: ARGS_HASH, agentStatus: 'awaiting_approval', approvers: ['alice'], taskQueue: queue });
    // The expiry is the park time plus approvalTimeoutMs; a run with no timeout has none.
    expect(Date.parse(itemB?.expiresAt ?? '') - Date.parse(itemB?.parkedAt ?? '')).toBe(600_000);
    expect(items.find((i) => i.workflowId === a.handle.workflowId)?.expiresAt).toBeNull();
    // Filters: by tool, by approver (from the policy), by age.
    expect((await awaitingOnQueue('&tool=list_files')).length).toBe(0);
    expect((await awaitingOnQueue('&tool=delete_file')).map((i) => i.workflowId)).toEqual(expect.arrayContaining(ids));
    expect((await awaitingOnQueue('&approver=alice')).map((i) => i.workflowId)).toEqual(expect.arrayContaining(ids));
    expect(await awaitingOnQueue('&approver=mallory')).toEqual([]);
    expect(await awaitingOnQueue('&minAgeMs=3600000')).toEqual([]);
    // Pages: limit 2, then the token the server gave.
    const first = await api(`/api/awaiting?taskQueue=${queue}&limit=2`);
    const page1 = (await first.json()) as AwaitingItem[];
    const next = first.headers.get('x-next-page-token');
    expect(page1).toHaveLength(2);
    expect(next).toMatch(/^[A-Za-z0-9_-]+$/);
    const page2 = (await (await api(`/api/awaiting?taskQueue=${queue}&limit=2&pageToken=${next}`)).json()) as AwaitingItem[];
    expect(new Set([...page1, ...page2].map((i) => i.workflowId))).toEqual(new Set(ids));
    // A bad limit names it.
    const bad = await api('/api/awaiting?limit=5000');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^limit must be a whole number from 1 to 1000/);

    // One run: its call and arguments decoded, its callKey (what a signature binds) and time left.
    const view = (await (await api(`/api/runs/${encodeURIComponent(b.handle.workflowId)}`)).json()) as { call: { args: unknown; callKey: string; argsHash: string }; timeLeftMs: number; approvers: string[] };
    expect(view.call).toMatchObject({ args: { path: 'access.log' }, argsHash: ARGS_HASH, callKey: expect.stringMatching(new RegExp(`^${b.handle.workflowId}@.+/call\\d+$`)) });
    expect(view.timeLeftMs).toBeGreaterThan(0);
    expect(view.timeLeftMs).toBeLessThanOrEqual(600_000);
    expect(view.approvers).toEqual(['alice']);

    // decide: alice's signed approval forwarded, the run's answer returned; the run completes.
    const r = await api(`/api/runs/${encodeURIComponent(a.handle.workflowId)}/decide`, { method: 'POST', body: JSON.stringify(signedBody(a.handle.workflowId, a.status)) });
    expect(r.status).toBe(200);
    expect(((await r.json()) as RunStatusView).interruption).toBeNull();
    expect((await a.handle.result()).output).toBe('Deleted access.log to free space.');
    decided.push({ workflowId: a.handle.workflowId, decision: 'approve' });
    // Unsigned: the run's validator refuses it, and the reason comes back.
    const unsigned = await api(`/api/runs/${encodeURIComponent(b.handle.workflowId)}/decide`, { method: 'POST', body: JSON.stringify({ callId: 'c2', decision: 'approve', by: 'alice' }) });
    expect(unsigned.status).toBe(409);
    expect(((await unsigned.json()) as { error: string }).error).toMatch(/^decision refused by the run: signature required: tool delete_file is listed in AGENT_APPROVERS/);
    expect((await b.handle.query(statusQuery)).interruption).toMatchObject({ callId: 'c2' });

    // Batch: b approved, c rejected, one entry for a run that does not exist; each answered in order.
    const batch = await api('/api/decide', {
      method: 'POST',
      body: JSON.stringify([
        { workflowId: b.handle.workflowId, ...signedBody(b.handle.workflowId, b.status) },
        { workflowId: c.handle.workflowId, ...signedBody(c.handle.workflowId, c.status, 'reject'), reason: 'keep them' },
        { workflowId: 'no-such-run', callId: 'c2', decision: 'approve' },
      ]),
    });
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { ok: boolean; workflowId: string; error?: string }[];
    expect(answers.map((x) => [x.workflowId, x.ok])).toEqual([
      [b.handle.workflowId, true],
      [c.handle.workflowId, true],
      ['no-such-run', false],
    ]);
    expect(answers[2].error).toMatch(/no run "no-such-run"/);
    expect((await b.handle.result()).output).toBe('Deleted access.log to free space.');
    expect((await c.handle.result()).output).toBe('I did not delete anything: you declined the deletion.');
    decided.push({ workflowId: b.handle.workflowId, decision: 'approve' }, { workflowId: c.handle.workflowId, decision: 'reject' });
    // None of them is parked any more.
    await waitFor('the decided runs gone from the inbox', async () => ((await awaitingOnQueue()).some((i) => ids.includes(i.workflowId)) ? null : true));
  });

  it('audit lists every decision taken (signed, by alice), none refused, as JSON lines and CSV; the CLI prints the same', async () => {
    // A run decided by signals: an unsigned one (ignored by the run) first, then alice's signed one.
    const d = await parked();
    await d.handle.signal('approve', { callId: 'c2', by: 'mallory' });
    await waitFor('the unsigned signal ignored', () => (h.trace(d.handle.workflowId).some((l) => l.type === 'signal_ignored') ? true : null));
    await d.handle.signal('approve', signedBody(d.handle.workflowId, d.status));
    await d.handle.result();
    decided.push({ workflowId: d.handle.workflowId, decision: 'approve' });
    const to = new Date(Date.now() + 1000).toISOString();
    const from = started.toISOString();
    const r = await api(`/api/audit?from=${from}&to=${to}&format=jsonl&taskQueue=${queue}`);
    expect(r.status).toBe(200);
    const lines = (await r.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditLine);
    expect(lines.map((l) => [l.workflowId, l.decision]).sort()).toEqual(decided.map((x) => [x.workflowId, x.decision]).sort());
    for (const l of lines) {
      expect(l).toMatchObject({ callId: 'c2', toolName: 'delete_file', argsHash: ARGS_HASH, by: 'alice', signed: true });
      expect(Date.parse(l.at)).toBeGreaterThanOrEqual(started.getTime());
    }
    expect(lines.find((l) => l.workflowId === d.handle.workflowId)?.via).toBe('signal');
    expect(lines.find((l) => l.workflowId === decided[0].workflowId)?.via).toBe('update');
    // CSV: the header, then one row per decision.
    const csv = await (await api(`/api/audit?from=${from}&to=${to}&format=csv&taskQueue=${queue}`)).text();
    const rows = csv.trim().split('\r\n');
    expect(rows[0]).toBe('workflowId,callId,toolName,argsHash,decision,by,at,via,signed');
    expect(rows).toHaveLength(decided.length + 1);
    expect(rows.slice(1).every((row) => row.split(',')[5] === 'alice')).toBe(true);
    // A range before any of them: nothing.
    expect((await (await api(`/api/audit?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z&taskQueue=${queue}`)).text()).trim()).toBe('');
    // The CLI's audit: the same lines (the same code), written to a file.
    const out = join(mkdtempSync(join(tmpdir(), 'audit-')), 'audit.jsonl');
    expect(await main(['audit', '--from', from, '--to', to, '--task-queue', queue, '--out', out], h.client)).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(
      (await auditDecisions(h.client, { from: new Date(from), to: new Date(to) }, { taskQueue: queue })).map((l) => `${JSON.stringify(l)}\n`).join(''),
    );
    expect(await main(['audit', '--format', 'xml'], h.client)).toBe(2);
  });
});

describe('the audit of the other decisions a person takes on a parked run', { timeout: 240_000 }, () => {
  it('lists a steer that interrupts a parked call as its reject (by update and by signal), and a budget raised', async () => {
    const from = new Date(Date.now() - 1000).toISOString();
    const park = async (prefix: string) => {
      const ws = freshWorkspace();
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: h.taskQueue, workflowId: `${prefix}-${ws}`, args: [{ task: 'Delete the old logs.', model: 'destructive', workspace: ws }] });
      h.track(handle.workflowId);
      await waitForApproval(handle, 'c2');
      return handle;
    };
    const byUpdate = await park('audit-steer-u');
    await byUpdate.executeUpdate(steerUpdate, { args: [{ message: 'keep access.log', by: 'bob', interrupt: true }] });
    await byUpdate.result();
    const bySignal = await park('audit-steer-s');
    await bySignal.signal(steerSignal, { message: 'not that one', by: 'carol', interrupt: true });
    await bySignal.result();
    // A hard budget that cannot pay plan's second turn parks awaiting_budget; dave raises it.
    const budget = await h.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue: h.taskQueue,
      workflowId: `audit-budget-${freshWorkspace()}`,
      args: [{ task: `Which file mentions a timeout? ${marker()}`, model: 'plan', limits: { maxTurns: 10, maxBudgetUsd: 0.004, budgetMode: 'hard', minReplyTokens: 256 } }],
    });
    h.track(budget.workflowId);
    await waitFor('the run to park on its budget', async () => ((await budget.query(statusQuery)).agentStatus === 'awaiting_budget' ? true : null));
    await budget.executeUpdate(raiseBudgetUpdate, { args: [{ maxBudgetUsd: 0.05, by: 'dave' }] });
    await budget.result();

    const lines = await auditDecisions(h.client, { from: new Date(from), to: new Date(Date.now() + 1000) }, { taskQueue: h.taskQueue });
    const of = (workflowId: string) => lines.filter((l) => l.workflowId === workflowId);
    expect(of(byUpdate.workflowId)).toEqual([expect.objectContaining({ callId: 'c2', toolName: 'delete_file', decision: 'reject', by: 'bob', via: 'update' })]);
    expect(of(bySignal.workflowId)).toEqual([expect.objectContaining({ callId: 'c2', toolName: 'delete_file', decision: 'reject', by: 'carol', via: 'signal' })]);
    expect(of(budget.workflowId)).toEqual([expect.objectContaining({ decision: 'raise_budget', by: 'dave', via: 'update', maxBudgetUsd: 0.05 })]);
  });
});
