// What Temporal itself stores, read from its own storage: a dev server of this
// file's own with its SQLite file (the suite's shared one is in memory). A run
// without payload keys leaves its task, a tool result and the model's reply in
// that file in clear (so the search can fail); a run with keys leaves none of
// them. And a run whose worker lacks the key is refused at once, naming the
// key id (never a workflow task failed for ever: docs/security.md).
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AgentInput } from '../common/contract.js';
import { dataConverter } from '../node/payload-codec.js';
import type { PayloadKey } from '../node/payload-keys.js';
import { findFreePort, startDevServer, type DevServer } from '../worker/dev-server/dev-server.js';
import { createAgentWorker } from '../worker/create-worker.js';
import { replayRuns, runsOnQueues, waitFor } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const KEYS: PayloadKey[] = [{ id: 'k-2026', key: new Uint8Array(randomBytes(32)) }];
const dir = mkdtempSync(join(tmpdir(), 'payload-storage-'));
const dbFile = join(dir, 'temporal.db');
const workspaceRoot = join(dir, 'ws');
let server: DevServer;
const connections: { close(): Promise<void> }[] = [];
// This file's own server goes when the file ends: every run on these queues replays first.
const queues = new Set<string>();

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile, logFile: join(dir, 'server.log'), startTimeoutMs: 90_000 });
}, 120_000);
afterAll(async () => {
  if (server) {
    const c = await client(KEYS);
    await replayRuns(c, await runsOnQueues(c, queues), KEYS);
  }
  for (const c of connections) await c.close().catch(() => {});
  await server?.stop();
});

async function client(payloadKeys: readonly PayloadKey[] | null): Promise<Client> {
  const connection = await Connection.connect({ address: server.address });
  connections.push(connection);
  return new Client({ connection, dataConverter: dataConverter({ payloadKeys }) });
}

async function worker(taskQueue: string, payloadKeys: readonly PayloadKey[] | null): Promise<{ worker: Worker; done: Promise<void> }> {
  queues.add(taskQueue);
  const connection = await NativeConnection.connect({ address: server.address });
  connections.push(connection);
  const w = await createAgentWorker({
    connection,
    taskQueue,
    plugin: { model: { baseUrl: inject('providerUrl') }, workspace: workspaceRoot, traceDir: join(dir, 'traces'), payloadKeys },
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  return { worker: w, done: w.run() };
}

/** Every byte the server's SQLite storage holds now (the database and its write-ahead log). */
function storage(): Buffer {
  return Buffer.concat(readdirSync(dirname(dbFile)).filter((f) => f.startsWith(basename(dbFile))).map((f) => readFileSync(join(dirname(dbFile), f))));
}

/** A run whose task, tool result and reply each carry a marker of their own; the texts to look for in storage. */
function scriptedRun(tag: string): { input: AgentInput; secrets: Record<string, string> } {
  const ws = `ws-${tag}`;
  mkdirSync(join(workspaceRoot, ws), { recursive: true });
  const id = randomUUID().slice(0, 8);
  // The script scenario answers "Done. The last tool said: <the result's last line>".
  writeFileSync(join(workspaceRoot, ws, 'notes.txt'), `tool-result-${tag}-${id}\nlast-line-${tag}-${id}`);
  return {
    input: { model: 'script', workspace: ws, task: `Read the notes. task-${tag}-${id} script: [[{"name":"read_file","args":{"path":"notes.txt"}}]]` },
    secrets: { task: `task-${tag}-${id}`, 'tool result': `tool-result-${tag}-${id}`, reply: `Done. The last tool said: last-line-${tag}-${id}` },
  };
}

const found = (bytes: Buffer, secrets: Record<string, string>) => Object.entries(secrets).filter(([, s]) => bytes.includes(s)).map(([what]) => what);

describe("Temporal's own storage", () => {
  it('holds the task, a tool result and the reply in clear without keys, and none of them with AGENT_PAYLOAD_KEYS', { timeout: 180_000 }, async () => {
    const plainQueue = `plain-${randomUUID().slice(0, 6)}`;
    const sealedQueue = `sealed-${randomUUID().slice(0, 6)}`;
    const workers = [await worker(plainQueue, null), await worker(sealedQueue, KEYS)];
    try {
      const plain = scriptedRun('plain');
      const sealed = scriptedRun('sealed');
      const plainResult = await (await client(null)).workflow.execute<typeof agentRun>('agentRun', { taskQueue: plainQueue, workflowId: `plain-${randomUUID().slice(0, 8)}`, args: [plain.input] });
      const sealedClient = await client(KEYS);
      const sealedResult = await sealedClient.workflow.execute<typeof agentRun>('agentRun', { taskQueue: sealedQueue, workflowId: `sealed-${randomUUID().slice(0, 8)}`, args: [sealed.input] });
      // The keyed client reads its run as any client does.
      expect(sealedResult).toMatchObject({ status: 'completed', output: sealed.secrets.reply });
      expect(plainResult).toMatchObject({ status: 'completed', output: plain.secrets.reply });
      // The server writes history as the run goes; give the write-ahead log a moment to hold the last events.
      const bytes = await waitFor('the plain run in the SQLite file', () => {
        const b = storage();
        return found(b, plain.secrets).length === 3 ? b : null;
      });
      expect(found(bytes, plain.secrets)).toEqual(['task', 'tool result', 'reply']);
      expect(found(bytes, sealed.secrets)).toEqual([]);
    } finally {
      for (const w of workers) {
        w.worker.shutdown();
        await w.done;
      }
    }
  });

  it('a run whose worker lacks the key is refused at once naming the key id, never a workflow task retried for ever', { timeout: 240_000 }, async () => {
    const taskQueue = `rotate-${randomUUID().slice(0, 6)}`;
    const keyed = await client(KEYS);
    const run = scriptedRun('late');
    const keyless = await worker(taskQueue, null);
    // Replayed below as it ran, by a worker without the key: one with the key
    // would decode the input and take another path (docs/security.md).
    queues.delete(taskQueue);
    try {
      const handle = await keyed.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `late-${randomUUID().slice(0, 8)}`, args: [run.input] });
      const err = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause as { type?: string; message?: string } | undefined;
      expect(cause?.type).toBe('InvalidInput');
      expect(cause?.message).toBe('the start input could not be decoded: payload encrypted with key id "k-2026", and no payload keys are configured: add it to AGENT_PAYLOAD_KEYS');
      // No workflow task failed on the way: the run answered at once.
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
      await replayRuns(keyed, [{ workflowId: handle.workflowId, runId: handle.firstExecutionRunId }]);
    } finally {
      keyless.worker.shutdown();
      await keyless.done;
    }
  });
});
