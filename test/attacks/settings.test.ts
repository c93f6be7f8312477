// Attacks on the settings (issue 33, item 6, the smaller ones): a port that is
// not a port passes no start-up check, and a refusal names the setting the
// way it was given (the plugin option, or the environment variable).
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../node/config.js';
import type { AgentInput, RunResult } from '../../common/contract.js';
import { dataConverter } from '../../node/payload-codec.js';
import type { PayloadKey } from '../../node/payload-keys.js';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { AGENT_EXIT_REASON } from '../../common/search-attributes.js';
import { findFreePort, startDevServer, type DevServer } from '../../worker/dev-server/dev-server.js';
import { createAgentWorker } from '../../worker/create-worker.js';
import { AgentPlugin } from '../../worker/index.js';
import { addFault, replayRuns, runsOnQueues, useHarness, waitFor } from '../helpers/harness.js';
import type { agentRun } from '../../workflows/index.js';

const h = useHarness({ worker: false });

/** A process of the project started as `npm run …` starts it, with `env` on top of a clean environment: its exit code and output. */
function runEntry(entry: string, env: Record<string, string>): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', entry], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TEMPORAL_ADDRESS: '127.0.0.1:1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('ports that are not ports', () => {
  it('the configuration check refuses CODEC_PORT=abc and METRICS_PORT=99999, naming the variable and the range', () => {
    expect(() => loadConfig({ CODEC_PORT: 'abc' })).toThrow(/^CODEC_PORT must be a port number from 1 to 65535, got "abc"$/);
    expect(() => loadConfig({ METRICS_PORT: '99999' })).toThrow(/^METRICS_PORT must be a port number from 1 to 65535, or off, got "99999"$/);
    expect(() => loadConfig({ TEMPORAL_UI_PORT: '70000' })).toThrow(/^TEMPORAL_UI_PORT must be a port number from 1 to 65535, got "70000"$/);
    expect(() => loadConfig({ PORT: '1e3' })).toThrow(/^PORT must be a port number from 1 to 65535, got "1e3"$/);
    // The edges stand.
    expect(loadConfig({ CODEC_PORT: '65535', METRICS_PORT: '1' }).metricsAddress).toBe('127.0.0.1:1');
  });

  it('the codec server and the worker stop at start with that line', { timeout: 120_000 }, () => {
    const codec = runEntry('client/codec-server-main.ts', { CODEC_PORT: 'abc' });
    expect(codec.status).toBe(1);
    expect(codec.output).toContain('codec server not started: CODEC_PORT must be a port number from 1 to 65535, got "abc"');
    const worker = runEntry('worker/main.ts', { METRICS_PORT: '99999' });
    expect(worker.status).not.toBe(0);
    expect(worker.output).toContain('METRICS_PORT must be a port number from 1 to 65535, or off, got "99999"');
  });
});

describe('a refusal names the setting as it was given', () => {
  it("a hard budget on a model the plugin's modelPrices option does not list names the option, not AGENT_MODEL_PRICES", { timeout: 120_000 }, async () => {
    const connection = await NativeConnection.connect({ address: h.address });
    const taskQueue = `prices-${randomUUID().slice(0, 8)}`;
    const plugin = new AgentPlugin({
      model: { baseUrl: h.providerUrl },
      workspace: mkdtempSync(join(tmpdir(), 'prices-ws-')),
      traceDir: mkdtempSync(join(tmpdir(), 'prices-trace-')),
      modelPrices: { 'house-model-13b': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    });
    const worker = await Worker.create({ connection, taskQueue, workflowBundle: { codePath: inject('workflowBundlePath') }, plugins: [plugin] });
    h.replayQueue(taskQueue);
    const done = worker.run();
    try {
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue,
        workflowId: `prices-${randomUUID().slice(0, 8)}`,
        args: [{ task: 'Which file mentions a timeout?', model: 'house-model-7b', limits: { maxBudgetUsd: 0.05, budgetMode: 'hard' } }],
      });
      const err = await handle.result().then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const message = (err as WorkflowFailedError).cause?.message ?? '';
      expect(message).toContain("list the model in the worker's AgentPlugin option modelPrices");
      expect(message).not.toContain('AGENT_MODEL_PRICES');
    } finally {
      worker.shutdown();
      await done;
      await connection.close();
    }
  });
});

// What Temporal stores is read from its own SQLite file: a dev server of this file's own.
describe('with payload keys, what Temporal does not encrypt carries no tool or model text', () => {
  const KEYS: PayloadKey[] = [{ id: 'k-attack', key: new Uint8Array(randomBytes(32)) }];
  const dir = mkdtempSync(join(tmpdir(), 'sealed-failures-'));
  const dbFile = join(dir, 'temporal.db');
  const workspaceRoot = join(dir, 'ws');
  let server: DevServer;
  const closers: (() => Promise<void>)[] = [];
  const queues = new Set<string>();

  beforeAll(async () => {
    server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile, logFile: join(dir, 'server.log'), startTimeoutMs: 90_000 });
  }, 120_000);
  afterAll(async () => {
    if (server) {
      const c = await client(KEYS);
      await replayRuns(c, await runsOnQueues(c, queues), KEYS);
    }
    for (const close of closers.reverse()) await close().catch(() => {});
    await server?.stop();
  });

  async function client(keys: readonly PayloadKey[] | null): Promise<Client> {
    const connection = await Connection.connect({ address: server.address });
    closers.push(() => connection.close());
    return new Client({ connection, dataConverter: dataConverter({ payloadKeys: keys }) });
  }

  async function worker(keys: readonly PayloadKey[] | null): Promise<string> {
    const taskQueue = `sealed-${randomUUID().slice(0, 6)}`;
    queues.add(taskQueue);
    const connection = await NativeConnection.connect({ address: server.address });
    const w = await createAgentWorker({ connection, taskQueue, plugin: { model: { baseUrl: h.providerUrl }, workspace: workspaceRoot, traceDir: join(dir, 'traces'), payloadKeys: keys }, workflowBundle: { codePath: inject('workflowBundlePath') } });
    const done = w.run();
    closers.push(async () => {
      w.shutdown();
      await done;
      await connection.close();
    });
    return taskQueue;
  }

  /** Every byte the server's SQLite storage holds now (the database and its write-ahead log). */
  const storage = () => Buffer.concat(readdirSync(dirname(dbFile)).filter((f) => f.startsWith(basename(dbFile))).map((f) => readFileSync(join(dirname(dbFile), f))));

  /** Two failing runs: a tool error whose text names a secret (toolErrors "fatal"), and a provider's 400 quoting one. */
  async function failingRuns(keys: readonly PayloadKey[] | null, tag: string): Promise<{ secrets: string[]; results: RunResult[]; reasons: unknown[] }> {
    const taskQueue = await worker(keys);
    const c = await client(keys);
    const ws = `ws-${tag}`;
    mkdirSync(join(workspaceRoot, ws), { recursive: true });
    const toolSecret = `tool-secret-${tag}-${randomUUID().slice(0, 8)}`;
    const modelSecret = `model-secret-${tag}-${randomUUID().slice(0, 8)}`;
    await addFault(h.providerUrl, { match: { taskIncludes: modelSecret.slice(-8) }, fault: { type: 'status', status: 400, message: `your prompt was refused: ${modelSecret}` }, times: 1 });
    const inputs: AgentInput[] = [
      { model: 'script', workspace: ws, toolErrors: 'fatal', task: `Read it. script: [[{"name":"read_file","args":{"path":"${toolSecret}.txt"}}]]` },
      { model: 'plan', workspace: ws, task: `Look around (${modelSecret.slice(-8)}).` },
    ];
    const results: RunResult[] = [];
    const reasons: unknown[] = [];
    for (const input of inputs) {
      const handle = await c.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `sealed-${tag}-${randomUUID().slice(0, 8)}`, args: [input] });
      results.push(await handle.result());
      reasons.push(await waitFor('AgentExitReason', async () => (await handle.describe()).typedSearchAttributes.get(AGENT_EXIT_REASON) ?? null));
    }
    return { secrets: [toolSecret, modelSecret], results, reasons };
  }

  it('the failure message and AgentExitReason name the error type, not the error text; the encrypted result keeps it', { timeout: 240_000 }, async () => {
    const plain = await failingRuns(null, 'plain');
    const sealed = await failingRuns(KEYS, 'sealed');
    // The keyed client reads the whole reason, as before.
    expect(sealed.results.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect(sealed.results[0].reason).toContain(sealed.secrets[0]);
    expect(sealed.results[1]).toMatchObject({ errorType: 'ProviderBadRequest' });
    expect(sealed.results[1].reason).toContain(sealed.secrets[1]);
    expect(sealed.reasons).toEqual(['failed (ToolError), the reason is in the encrypted result', 'failed (ProviderBadRequest), the reason is in the encrypted result']);
    // Without keys the secrets are in the server's storage (so the search can find them)…
    const bytes = await waitFor('the plain runs in the SQLite file', () => {
      const b = storage();
      return plain.secrets.every((s) => b.includes(s)) ? b : null;
    });
    // …and with keys, in neither the search attribute nor the activity's failure.
    expect(sealed.secrets.filter((s) => bytes.includes(s) || storage().includes(s))).toEqual([]);
  });
});
