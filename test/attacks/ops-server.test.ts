// The ops server as an attacker meets it: no token, a wrong one, another
// site's page, a decision signed for another run or replayed, bodies and
// batches past the limits, a workflow id that tries to walk the file system,
// and a server started without AGENT_OPS_TOKEN. Whatever gets through the
// server still meets the run's own validator: the server holds no key, so it
// cannot make a decision a listed approver did not sign.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AgentInput, RunStatusView } from '../../common/contract.js';
import { statusQuery } from '../../common/run-messages.js';
import { newKeyPair, type ApproverPolicy } from '../../common/signed-decision.js';
import { main } from '../../client/cli.js';
import { startOpsServer, type OpsServer } from '../../client/ops-server.js';
import { signCall } from '../../client/signing.js';
import type { agentRun } from '../../workflows/index.js';
import { freshWorkspace, useHarness, waitForApproval } from '../helpers/harness.js';

const h = useHarness();
const alice = newKeyPair();
const policy: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_file: ['alice'] } };
const TOKEN = `ops-${randomUUID()}`;
const queue = `ops-attack-${randomUUID().slice(0, 8)}`;
let ops: OpsServer;
let worker: { shutdown(): Promise<void> };

beforeAll(async () => {
  worker = await h.startWorker({ taskQueue: queue, runDefaults: { approvers: policy } });
  ops = await startOpsServer(0, '127.0.0.1', { client: h.client, token: TOKEN, approvers: policy });
});
afterAll(async () => {
  await ops?.close();
  await worker?.shutdown();
});

async function parked(model = 'destructive', callId = 'c2', extra: Partial<AgentInput> = {}) {
  const ws = freshWorkspace();
  const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: `ops-attack-${ws}`, args: [{ task: 'Delete the old logs.', model, workspace: ws, ...extra }] });
  const status = await waitForApproval(handle, callId);
  return { handle, status, ws };
}

function signedBody(workflowId: string, status: RunStatusView, decision: 'approve' | 'reject' = 'approve') {
  const i = status.interruption;
  if (i?.type !== 'approval' || !i.callKey) throw new Error('not parked');
  return { callId: i.callId, decision, by: 'alice', ...signCall({ workflowId, callId: i.callId, callKey: i.callKey, toolName: i.toolName, decision, argsHash: i.argsHash, by: 'alice', key: alice.privateKey }) };
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${ops.url}${path}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers } });
const errorOf = async (r: Response) => ((await r.json()) as { error: string }).error;

/** A request with the path exactly as written (fetch would resolve the dots). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(ops.url);
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function stillParked(handle: { query: (q: typeof statusQuery) => Promise<RunStatusView> }, ws: string, file = 'access.log') {
  expect((await handle.query(statusQuery)).agentStatus).toBe('awaiting_approval');
  expect(existsSync(join(h.workspaceRoot, ws, file))).toBe(true);
}

describe('the ops server under attack', { timeout: 240_000 }, () => {
  it('no token, a wrong token, a token in the query string: 401 on every API route; the run stays parked', async () => {
    const { handle, status, ws } = await parked();
    const id = encodeURIComponent(handle.workflowId);
    const routes: [string, string][] = [
      ['GET', '/api/awaiting'],
      ['GET', `/api/runs/${id}`],
      ['GET', `/api/runs/${id}/events`],
      ['GET', '/api/audit'],
      ['POST', `/api/runs/${id}/decide`],
      ['POST', '/api/decide'],
    ];
    const body = JSON.stringify(signedBody(handle.workflowId, status));
    for (const [method, path] of routes) {
      const init = (auth: string | null): RequestInit => ({ method, headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) }, ...(method === 'POST' ? { body } : {}) });
      const none = await fetch(`${ops.url}${path}`, init(null));
      expect([path, none.status]).toEqual([path, 401]);
      expect(await errorOf(none)).toMatch(/^missing bearer token: send Authorization: Bearer <AGENT_OPS_TOKEN>/);
      const wrong = await fetch(`${ops.url}${path}`, init(`Bearer ${TOKEN}x`));
      expect([path, wrong.status]).toEqual([path, 401]);
      expect(await errorOf(wrong)).toBe('wrong bearer token');
      const basic = await fetch(`${ops.url}${path}`, init(`Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`));
      expect(basic.status).toBe(401);
      const inQuery = await fetch(`${ops.url}${path}${path.includes('?') ? '&' : '?'}token=${TOKEN}`, init(null));
      expect(inQuery.status).toBe(401);
    }
    await stillParked(handle, ws);
    // The page itself carries no data: served without the token, locked by its CSP.
    const page = await fetch(`${ops.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'.*connect-src 'self'.*frame-ancestors 'none'/);
    await post(`/api/runs/${id}/decide`, body);
  });

  it('another site\'s page: a foreign Origin is refused (403) even with the token and a valid signature; no CORS header is ever sent', async () => {
    const { handle, status, ws } = await parked();
    const id = encodeURIComponent(handle.workflowId);
    const body = signedBody(handle.workflowId, status);
    for (const origin of ['https://evil.example', 'http://127.0.0.1:1', 'null', `${ops.url}.evil.example`]) {
      const r = await post(`/api/runs/${id}/decide`, body, { origin });
      expect([origin, r.status]).toEqual([origin, 403]);
      expect(await errorOf(r)).toMatch(/cross-origin requests are refused/);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
      const g = await fetch(`${ops.url}/api/awaiting`, { headers: { authorization: `Bearer ${TOKEN}`, origin } });
      expect(g.status).toBe(403);
    }
    const batch = await post('/api/decide', [{ workflowId: handle.workflowId, ...body }], { origin: 'https://evil.example' });
    expect(batch.status).toBe(403);
    // A preflight is not answered with CORS: the browser never lets the foreign page send.
    const pre = await fetch(`${ops.url}/api/decide`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    // A form post (no JSON content type, as a cross-site form sends) is refused too.
    const form = await post(`/api/runs/${id}/decide`, 'callId=c2&decision=approve', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    await stillParked(handle, ws);
    // The page's own origin passes.
    const own = await post(`/api/runs/${id}/decide`, body, { origin: ops.url });
    expect(own.status).toBe(200);
    expect((await handle.result()).status).toBe('completed');
  });

  it('a decision signed for another run is refused by that run\'s validator, with the reason shown; unsigned too: the server cannot decide alone', async () => {
    const a = await parked();
    const b = await parked();
    const forB = signedBody(b.handle.workflowId, b.status);
    const r = await post(`/api/runs/${encodeURIComponent(a.handle.workflowId)}/decide`, forB);
    expect(r.status).toBe(409);
    expect(await errorOf(r)).toMatch(/^decision refused by the run: signature is for another run: signed for workflow "ops-attack-/);
    // The same through the batch route: the entry's workflowId is the one signed, so retargeting it breaks the signature.
    const batch = (await (await post('/api/decide', [{ ...forB, workflowId: a.handle.workflowId }])).json()) as { ok: boolean; error: string }[];
    expect(batch[0]).toMatchObject({ ok: false, code: 409, error: expect.stringMatching(/^decision refused by the run: signature does not verify/) });
    // The server adds nothing: an unsigned decision, or one naming alice without her signature, is refused as such.
    const unsigned = await post(`/api/runs/${encodeURIComponent(a.handle.workflowId)}/decide`, { callId: 'c2', decision: 'approve', by: 'alice' });
    expect(await errorOf(unsigned)).toMatch(/signature required: tool delete_file is listed in AGENT_APPROVERS/);
    await stillParked(a.handle, a.ws);
    await stillParked(b.handle, b.ws);
    for (const x of [a, b]) expect((await post(`/api/runs/${encodeURIComponent(x.handle.workflowId)}/decide`, signedBody(x.handle.workflowId, x.status, 'reject'))).status).toBe(200);
  });

  it('a replayed decision is refused: the first call\'s approval sent again when the run parks on its next call of the same id', async () => {
    // same_call_id: two deletions both named call_0 (access.log, then notes.txt).
    const { handle, status, ws } = await parked('same_call_id', 'call_0');
    const first = signedBody(handle.workflowId, status);
    expect((await post(`/api/runs/${encodeURIComponent(handle.workflowId)}/decide`, first)).status).toBe(200);
    const second = await waitFor(async () => {
      const s = await handle.query(statusQuery);
      return s.interruption?.type === 'approval' && s.interruption.callKey !== (status.interruption as { callKey?: string }).callKey ? s : null;
    });
    const replay = await post(`/api/runs/${encodeURIComponent(handle.workflowId)}/decide`, first);
    expect(replay.status).toBe(409);
    expect(await errorOf(replay)).toMatch(/^decision refused by the run: /);
    await stillParked(handle, ws, 'notes.txt');
    // The same replayed again through the batch: refused again, the file still there.
    const again = (await (await post('/api/decide', [{ workflowId: handle.workflowId, ...first }])).json()) as { ok: boolean }[];
    expect(again[0].ok).toBe(false);
    await stillParked(handle, ws, 'notes.txt');
    expect((await post(`/api/runs/${encodeURIComponent(handle.workflowId)}/decide`, signedBody(handle.workflowId, second, 'reject'))).status).toBe(200);
    await handle.result();
  });

  it('oversized bodies (declared or streamed) are refused 413 naming the limit; a batch of 10,000 is refused naming its limit of 500', async () => {
    const big = JSON.stringify({ callId: 'c2', decision: 'approve', reason: 'x'.repeat(2 * 1024 * 1024) });
    const r = await post('/api/runs/anything/decide', big);
    expect(r.status).toBe(413);
    expect(await errorOf(r)).toMatch(/over the 1048576-byte limit/);
    // Streamed without a length: cut at the limit all the same.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 40; i += 1) c.enqueue(new Uint8Array(64 * 1024).fill(0x20));
        c.close();
      },
    });
    const chunked = await fetch(`${ops.url}/api/decide`, { method: 'POST', body: stream, duplex: 'half', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } } as RequestInit).catch((e: unknown) => e);
    if (chunked instanceof Response) {
      expect(chunked.status).toBe(413);
    } else {
      // The server closed the connection once it had answered 413: the client may see the reset instead.
      expect(String(chunked)).toMatch(/fetch failed|socket|reset|closed/i);
    }
    const entries = Array.from({ length: 10_000 }, (_, i) => ({ workflowId: `w${i}`, callId: 'c2', decision: 'approve' }));
    const batch = await post('/api/decide', entries);
    expect(batch.status).toBe(413);
    expect(await errorOf(batch)).toBe('a batch of 10000 decisions is over the limit of 500 decisions a batch');
    // Not an array, not JSON: 400 naming what is wrong.
    expect(await errorOf(await post('/api/decide', { workflowId: 'w' }))).toMatch(/^body must be a JSON array of decisions/);
    expect(await errorOf(await post('/api/decide', '{not json'))).toBe('request body is not JSON');
    // The server still answers.
    expect((await fetch(`${ops.url}/api/awaiting`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('path traversal in the workflow id reads no file: an unknown run (404) or a refused id (400)', async () => {
    for (const path of ['/api/runs/..%2F..%2F..%2Fetc%2Fpasswd', '/api/runs/%2e%2e', '/api/runs/..%2F..%2Fetc%2Fpasswd/events', '/api/../../../etc/passwd', '/../../etc/passwd', '/api/runs/../../../../etc/passwd']) {
      const r = await rawGet(path);
      expect([path, r.status]).toEqual([path, 404]);
      expect(r.body).not.toMatch(/root:/);
      expect(JSON.parse(r.body)).toHaveProperty('error');
    }
    expect((await rawGet('/api/runs/a%00b')).status).toBe(400);
    expect((await rawGet('/api/runs/%E0%A4%A')).status).toBe(400);
    expect((await rawGet(`/api/runs/${'x'.repeat(1001)}`)).status).toBe(400);
  });

  it('the server started without AGENT_OPS_TOKEN refuses to start, naming the variable', async () => {
    await expect(startOpsServer(0, '127.0.0.1', { client: h.client, token: '' })).rejects.toThrow(/^AGENT_OPS_TOKEN is required/);
    const saved = process.env.AGENT_OPS_TOKEN;
    delete process.env.AGENT_OPS_TOKEN;
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await main(['ops', '--port', '0'], h.client)).toBe(2);
      expect(err.mock.calls.flat().join('\n')).toMatch(/AGENT_OPS_TOKEN is required/);
      process.env.AGENT_OPS_TOKEN = 'short';
      expect(await main(['ops', '--port', '0'], h.client)).toBe(2);
      expect(err.mock.calls.flat().join('\n')).toMatch(/AGENT_OPS_TOKEN must be at least 16 characters/);
    } finally {
      err.mockRestore();
      if (saved === undefined) delete process.env.AGENT_OPS_TOKEN;
      else process.env.AGENT_OPS_TOKEN = saved;
    }
  });
});

async function waitFor<T>(probe: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 900; i += 1) {
    const v = await probe();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}
