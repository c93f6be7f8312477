// What the compose stack's server stores in PostgreSQL, read back from its own
// databases (temporal and temporal_visibility, every table of each): the
// cluster counterpart of test/payload-storage.test.ts, which reads the dev
// server's SQLite file. A run without payload keys leaves its task, a tool
// result and the model's reply there in clear (so the search can fail); a run
// with AGENT_PAYLOAD_KEYS on its worker and its client leaves none of them,
// though its rows are there (its workflow id, which is never encrypted, is found).
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AgentInput } from '../../common/contract.js';
import { dataConverter } from '../../node/payload-codec.js';
import type { PayloadKey } from '../../node/payload-keys.js';
import { createAgentWorker } from '../../worker/create-worker.js';
import { waitFor } from '../helpers/harness.js';
import type { agentRun } from '../../workflows/index.js';

const KEYS: PayloadKey[] = [{ id: 'cluster-k1', key: new Uint8Array(randomBytes(32)) }];
// The databases deploy/compose/setup-postgres.sh creates and the server's config names.
const DATABASES = ['temporal', 'temporal_visibility'];
const dir = mkdtempSync(join(tmpdir(), 'cluster-payload-storage-'));
const workspaceRoot = join(dir, 'ws');
const connections: { close(): Promise<void> }[] = [];

// The workers' state changes at INFO would bury the suite's output.
beforeAll(() => Runtime.install({ logger: new DefaultLogger('ERROR') }));
afterAll(async () => {
  for (const c of connections) await c.close().catch(() => {});
});

async function client(payloadKeys: readonly PayloadKey[] | null): Promise<Client> {
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  connections.push(connection);
  return new Client({ connection, dataConverter: dataConverter({ payloadKeys }) });
}

async function worker(taskQueue: string, payloadKeys: readonly PayloadKey[] | null): Promise<{ worker: Worker; done: Promise<void> }> {
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  connections.push(connection);
  const w = await createAgentWorker({
    connection,
    taskQueue,
    plugin: { model: { baseUrl: inject('providerUrl') }, workspace: workspaceRoot, traceDir: join(dir, 'traces'), payloadKeys },
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  return { worker: w, done: w.run() };
}

/**
 * Every row of every table of Temporal's databases, as PostgreSQL prints a row
 * (`t::text`): text columns as they are, bytea (history events, mutable
 * state, visibility memos: protobuf whose payload bytes are the run's JSON) as
 * `\x` and hex. Read through SQL rather than from PostgreSQL's files, whose
 * pages may still be in its shared buffers, and whose TOAST may compress.
 */
async function storage(): Promise<string> {
  const { host, port, user, password } = inject('clusterPostgres');
  const dumps: string[] = [];
  for (const database of DATABASES) {
    const db = new pg.Client({ host, port, user, password, database });
    await db.connect();
    try {
      const tables = await db.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1");
      expect(tables.rows.length, `tables in ${database}`).toBeGreaterThan(0);
      for (const { name } of tables.rows) {
        const rows = await db.query<{ row: string }>(`SELECT t::text AS row FROM public."${name.replaceAll('"', '""')}" t`);
        dumps.push(`-- ${database}.${name}`, ...rows.rows.map((r) => r.row));
      }
    } finally {
      await db.end();
    }
  }
  return dumps.join('\n');
}

/** Where `text` is in the dump: in clear (a text column) and as bytea hex (the bytes of its UTF-8). */
function encodings(text: string): string[] {
  return [text, Buffer.from(text, 'utf8').toString('hex')];
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

/** Which of the secrets are in the dump, and in which encoding (clear or hex). */
function found(dump: string, secrets: Record<string, string>): string[] {
  const lower = dump.toLowerCase();
  return Object.entries(secrets).flatMap(([what, s]) => {
    const [clear, hex] = encodings(s);
    return [...(dump.includes(clear) ? [`${what} (clear)`] : []), ...(lower.includes(hex) ? [`${what} (hex)`] : [])];
  });
}

describe("the cluster's PostgreSQL", () => {
  it('holds the task, a tool result and the reply of a run without keys, and none of them of a run with AGENT_PAYLOAD_KEYS', { timeout: 180_000 }, async () => {
    const plainQueue = `pg-plain-${randomUUID().slice(0, 6)}`;
    const sealedQueue = `pg-sealed-${randomUUID().slice(0, 6)}`;
    const workers = [await worker(plainQueue, null), await worker(sealedQueue, KEYS)];
    try {
      const plain = scriptedRun('plain');
      const sealed = scriptedRun('sealed');
      const plainId = `pg-plain-${randomUUID().slice(0, 8)}`;
      const sealedId = `pg-sealed-${randomUUID().slice(0, 8)}`;
      const plainResult = await (await client(null)).workflow.execute<typeof agentRun>('agentRun', { taskQueue: plainQueue, workflowId: plainId, args: [plain.input] });
      const sealedResult = await (await client(KEYS)).workflow.execute<typeof agentRun>('agentRun', { taskQueue: sealedQueue, workflowId: sealedId, args: [sealed.input] });
      // The keyed client reads its run as any client does.
      expect(plainResult).toMatchObject({ status: 'completed', output: plain.secrets.reply });
      expect(sealedResult).toMatchObject({ status: 'completed', output: sealed.secrets.reply });
      // History is written before the result is answered; visibility follows
      // it asynchronously: wait until both runs' rows are in both databases.
      const dump = await waitFor('both runs in the temporal and temporal_visibility tables', async () => {
        const d = await storage();
        const visibility = d.slice(d.indexOf('-- temporal_visibility.'));
        return found(d, plain.secrets).length > 0 && [plainId, sealedId].every((id) => visibility.includes(id)) ? d : null;
      });
      // The search finds what is there: the keyless run's payloads, as the
      // bytes of protobuf blobs (bytea, so in hex).
      expect(found(dump, plain.secrets)).toEqual(expect.arrayContaining(['task (hex)', 'tool result (hex)', 'reply (hex)']));
      // The sealed run is stored (its id, in clear, in the executions tables)...
      expect(dump.includes(sealedId)).toBe(true);
      // ...and none of its payloads' texts, in any encoding.
      expect(found(dump, sealed.secrets)).toEqual([]);
    } finally {
      for (const w of workers) {
        w.worker.shutdown();
        await w.done;
      }
    }
  });
});
