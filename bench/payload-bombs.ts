// `tsx bench/payload-bombs.ts`: decompression bombs against a worker and the
// codec server, each a process of its own whose peak resident memory
// (VmHWM, /proc/<pid>/status) is read before and after (issue 33, item 2).
//   Worker: a run parked on an approval gets an `approve` signal whose payload
//   says binary/gzip: ~200 KB of gzip that unpack to BOMBS_WORKER_MIB (default 200) MiB.
//   Codec server: one /decode request of BOMBS_CODEC_COUNT (default 2) such payloads
//   of BOMBS_CODEC_MIB (default 200) MiB each (~0.5 MB of base64 in all).
// The bombs are built here, streamed from zeros: nothing large is kept on disk.
// Run it on a checkout before the cap for the "before" figures.
// Writes BOMBS_REPORT (default reports/payload-bombs.md).
import { Client, Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import proto from '@temporalio/proto';
import { AGENT_LOOP_DYNAMIC_CONFIG, findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { dataConverter } from '../node/payload-codec.js';
import { startWorkerProcess } from '../test/helpers/spawn-worker.js';
import { startProvider } from '../dev/provider/server.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { statusQuery } from '../common/run-messages.js';

const MiB = 1024 * 1024;
const BOMB_MIB = Number(process.env.BOMBS_WORKER_MIB ?? 200);
const CODEC_BOMBS = Number(process.env.BOMBS_CODEC_COUNT ?? 2);
const CODEC_BOMB_MIB = Number(process.env.BOMBS_CODEC_MIB ?? 200);
/** How long the worker is watched after the bomb: its task is retried meanwhile, if it fails. */
const WATCH_MS = Number(process.env.BOMBS_WATCH_MS ?? 30_000);

function status(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/**
 * gzip of a well-formed Payload message (binary/plain) whose data is `bytes`
 * zeros: a decoder without a cap unpacks it whole and hands it on, as a
 * crafted bomb would be. Streamed: never held unpacked here.
 */
async function gzipOfZeros(size: number): Promise<Buffer> {
  const bytes = Math.floor(size);
  const head = proto.temporal.api.common.v1.Payload.encode({ metadata: { encoding: new TextEncoder().encode('binary/plain') } }).finish();
  const varint: number[] = [];
  for (let n = bytes; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      varint.push(n);
      break;
    }
    varint.push((n % 128) | 128);
  }
  const gz = createGzip({ level: 9 });
  gz.write(Buffer.concat([head, Buffer.from([0x12, ...varint])]));
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const done = new Promise<void>((resolve, reject) => {
    gz.on('end', resolve);
    gz.on('error', reject);
  });
  const chunk = Buffer.alloc(MiB);
  for (let left = bytes; left > 0; left -= chunk.length) {
    if (!gz.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await new Promise((r) => gz.once('drain', r));
  }
  gz.end();
  await done;
  return Buffer.concat(out);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function worker(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-bombs-'));
  const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig: AGENT_LOOP_DYNAMIC_CONFIG });
  const provider = await startProvider();
  const client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: dataConverter() });
  const ws = join(dir, 'ws');
  mkdirSync(join(ws, 'w1'), { recursive: true });
  writeFileSync(join(ws, 'w1', 'access.log'), 'log\n');
  const w = await startWorkerProcess({ address: server.address, taskQueue: 'bombs', traceDir: join(dir, 'traces'), workspaceRoot: ws, llmBaseUrl: provider.url });
  const pid = w.child.pid ?? 0;
  try {
    const handle = await client.workflow.start('agentRun', { taskQueue: 'bombs', workflowId: `bombs-${Date.now()}`, args: [{ task: 'Free some space.', model: 'destructive', workspace: 'w1' }] });
    for (;;) {
      const s = await handle.query(statusQuery);
      if (s.interruption?.type === 'approval') break;
      await sleep(200);
    }
    const before = status(pid, 'VmHWM');
    const data = await gzipOfZeros(BOMB_MIB * MiB);
    const sent = Date.now();
    await client.workflowService.signalWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: handle.workflowId },
      signalName: 'approve',
      input: { payloads: [{ metadata: { encoding: new TextEncoder().encode('binary/gzip') }, data }] },
      identity: 'bench',
    });
    await sleep(WATCH_MS);
    if (w.child.exitCode !== null || w.child.signalCode !== null) throw new Error(`the worker died (${w.child.exitCode ?? w.child.signalCode}):\n${w.output().slice(-3000)}`);
    const after = status(pid, 'VmHWM');
    const rssNow = status(pid, 'VmRSS');
    // Does the run still answer, and end on a cancel?
    const answers = await Promise.race([handle.query(statusQuery).then(() => 'yes'), sleep(10_000).then(() => 'no (timed out)')]).catch((e: unknown) => `no (${String(e).slice(0, 80)})`);
    await handle.cancel();
    const ended = await Promise.race([handle.result().then((r) => r.status), sleep(15_000).then(() => 'still RUNNING 15 s after cancel')]).catch((e: unknown) => String(e).slice(0, 80));
    await client.workflow.getHandle(handle.workflowId).terminate('bench over').catch(() => undefined);
    return [
      `| worker | approve signal, ${(data.length / 1024).toFixed(0)} KB of gzip unpacking to ${BOMB_MIB} MiB | ${before} | ${after} | watched ${Math.round((Date.now() - sent) / 1000)} s, RSS then ${rssNow} MiB; status answers: ${answers}; after \`cancel\`: ${ended} |`,
    ];
  } finally {
    await w.kill();
    await client.connection.close();
    await provider.close();
    await server.stop();
  }
}

async function codecServer(): Promise<string[]> {
  const port = await findFreePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'client/codec-server-main.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, CODEC_PORT: String(port), AGENT_PAYLOAD_KEYS: '', AGENT_CODEC_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid ?? 0;
  try {
    for (let i = 0; ; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false);
      if (up) break;
      if (i > 300) throw new Error('codec server not up');
      await sleep(100);
    }
    const before = status(pid, 'VmHWM');
    const one = (await gzipOfZeros(CODEC_BOMB_MIB * MiB)).toString('base64');
    const body = JSON.stringify({ payloads: Array.from({ length: CODEC_BOMBS }, () => ({ metadata: { encoding: Buffer.from('binary/gzip').toString('base64') }, data: one })) });
    // Sampled while it works: a server that dies of it has no /proc entry left to read.
    let after = before;
    const sampler = setInterval(() => {
      try {
        after = Math.max(after, status(pid, 'VmHWM'));
      } catch {
        // gone
      }
    }, 50);
    let said: string;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const answer = await res.text();
      said = `answered ${res.status} with ${(answer.length / MiB).toFixed(1)} MiB${res.status === 200 ? '' : `: ${answer.slice(0, 140)}`}`;
    } catch (err) {
      said = `no answer (${String((err as { cause?: unknown }).cause ?? err).slice(0, 80)}); server ${child.exitCode === null && child.signalCode === null ? 'still up' : `exited (${child.exitCode ?? child.signalCode})`}`;
    }
    await sleep(500);
    clearInterval(sampler);
    try {
      after = Math.max(after, status(pid, 'VmHWM'));
    } catch {
      // gone
    }
    return [`| codec server | /decode, ${(body.length / 1024).toFixed(0)} KB body: ${CODEC_BOMBS} payloads unpacking to ${CODEC_BOMB_MIB} MiB each | ${before} | ${after} | ${said} |`];
  } finally {
    child.kill();
  }
}

const rows = [...(await codecServer()), ...(await worker())];
const report = [
  `# Decompression bombs (bench/payload-bombs.ts, ${new Date().toISOString().slice(0, 10)})`,
  '',
  'Peak resident memory (VmHWM, MiB) of each process before and after it is fed the bomb.',
  '',
  '| process | bomb | peak before | peak after | notes |',
  '|---|---|---|---|---|',
  ...rows,
  '',
].join('\n');
const out = process.env.BOMBS_REPORT ?? join(PROJECT_ROOT, 'reports', 'payload-bombs.md');
writeFileSync(out, report);
console.log(report);
process.exit(0);
