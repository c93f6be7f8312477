// The ops server's figures (docs/operations.md, "Ops center"), measured on a
// dev server started like the suite's (its global setup), with
// OPS_MEASURE_RUNS runs parked (default 1000; minutes of CPU on a small
// machine, so a bench, not a test of the suite):
//   OPS_MEASURE_RUNS=1000 LOCAL_MODEL_PATH=/dev/null LLAMA_SERVER=/bin/false npm run bench:ops
// Time to the first page of /api/awaiting with that many runs parked, and
// batch-approval throughput (POST /api/decide) for 50 and 500 signed decisions.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunStatusView } from '../common/contract.js';
import { statusQuery } from '../common/run-messages.js';
import { newKeyPair, type ApproverPolicy } from '../common/signed-decision.js';
import { startOpsServer, type OpsServer } from '../client/ops-server.js';
import { signCall } from '../client/signing.js';
import type { agentRun } from '../workflows/index.js';
import { freshWorkspace, useHarness, waitFor } from '../test/helpers/harness.js';

const N = Number(process.env.OPS_MEASURE_RUNS ?? 1000);
if (!Number.isInteger(N) || N < 500) throw new Error(`OPS_MEASURE_RUNS must be an integer >= 500 (the 500-run batch), got ${JSON.stringify(process.env.OPS_MEASURE_RUNS)}`);
const h = useHarness();
const alice = newKeyPair();
const policy: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_file: ['alice'] } };
const TOKEN = `ops-${randomUUID()}`;
const queue = `ops-measure-${randomUUID().slice(0, 8)}`;
let ops: OpsServer;
let worker: { shutdown(): Promise<void> } | undefined;

beforeAll(async () => {
  worker = await h.startWorker({ taskQueue: queue, runDefaults: { approvers: policy }, maxCachedWorkflows: 2000 });
  ops = await startOpsServer(0, '127.0.0.1', { client: h.client, token: TOKEN, approvers: policy });
});
afterAll(async () => {
  await ops?.close();
  await worker?.shutdown();
});

const api = (path: string, init: RequestInit = {}) => fetch(`${ops.url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } });

async function pool<T>(items: readonly T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe(`the ops server with ${N} runs parked`, { timeout: 3_600_000 }, () => {
  it('first page of the inbox, and batch approvals of 50 and 500', async () => {
    const ids = Array.from({ length: N }, () => `measure-${freshWorkspace()}`);
    const t0 = Date.now();
    await pool(ids, 50, async (id) => {
      await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: id, args: [{ task: 'Delete the old logs.', model: 'destructive', workspace: id }] });
    });
    await waitFor(`${N} runs parked`, async () => ((await h.client.workflow.count(`TaskQueue = '${queue}' AND AgentStatus = 'awaiting_approval'`)).count >= N ? true : null), 3_000_000);
    const parkS = (Date.now() - t0) / 1000;
    const page = async (limit: number) => {
      const s = performance.now();
      const r = await api(`/api/awaiting?taskQueue=${queue}&limit=${limit}`);
      const items = (await r.json()) as unknown[];
      expect(items).toHaveLength(Math.min(limit, N));
      return performance.now() - s;
    };
    const first100 = median(await Promise.all([0, 1, 2, 3, 4].map(() => page(100))));
    const first1000 = median([await page(1000), await page(1000), await page(1000)]);
    // Every page, following the tokens: the whole inbox.
    const sAll = performance.now();
    let listed = 0;
    for (let token = ''; ; ) {
      const r = await api(`/api/awaiting?taskQueue=${queue}&limit=1000${token ? `&pageToken=${token}` : ''}`);
      listed += ((await r.json()) as unknown[]).length;
      token = r.headers.get('x-next-page-token') ?? '';
      if (!token) break;
    }
    const allMs = performance.now() - sAll;
    expect(listed).toBe(N);
    // Said at once: the batches below can take minutes on a loaded machine.
    console.log(`ops server, ${N} runs parked (${parkS.toFixed(0)} s to park them): first page of /api/awaiting: limit 100 ${first100.toFixed(0)} ms, limit 1000 ${first1000.toFixed(0)} ms (medians); all ${N} over pages of 1000: ${allMs.toFixed(0)} ms`);

    const batch = async (chunk: string[]) => {
      // What the page does first: each run's callKey (the status query), then one request.
      const bodies: object[] = [];
      await pool(chunk, 16, async (id) => {
        const s: RunStatusView = await h.client.workflow.getHandle(id).query(statusQuery);
        const i = s.interruption;
        if (i?.type !== 'approval' || !i.callKey) throw new Error(`${id} not parked`);
        bodies.push({ workflowId: id, callId: i.callId, decision: 'approve', by: 'alice', ...signCall({ workflowId: id, callId: i.callId, callKey: i.callKey, toolName: i.toolName, decision: 'approve', argsHash: i.argsHash, by: 'alice', key: alice.privateKey }) });
      });
      const s = performance.now();
      const answers = (await (await api('/api/decide', { method: 'POST', body: JSON.stringify(bodies) })).json()) as { ok: boolean; code?: number; error?: string }[];
      const ms = performance.now() - s;
      // Refused: none. Unanswered within the server's 20 s (a worker too loaded to take the update in time): counted and said.
      expect(answers.filter((a) => !a.ok && a.code !== 504)).toEqual([]);
      const late = answers.filter((a) => a.code === 504).length;
      console.log(`batch approve ${chunk.length}: ${ms.toFixed(0)} ms (${((chunk.length * 1000) / ms).toFixed(1)} runs/s), ${chunk.length - late} answered, ${late} not answered within 20 s`);
      return ms;
    };
    const ms50 = await batch(ids.slice(0, 50));
    const ms500 = N >= 550 ? await batch(ids.slice(50, 550)) : NaN;
    expect(ms50 + (Number.isNaN(ms500) ? 0 : ms500)).toBeGreaterThan(0);
    // The rest are left parked: cancelled, so the file's replay at its end has less to do.
    await pool(ids.slice(550), 50, async (id) => {
      await h.client.workflow.getHandle(id).terminate('measurement done');
    });
  });
});
