// `tsx bench/trust.ts`: what the trust features cost.
// 1. Per turn, encryption on vs off: a `runaway` run capped at 20 turns on a
//    worker with payload keys and on one without, interleaved (on, off, on, …)
//    so the machine's drift falls on both alike; min / median / max ms per turn.
// 2. Codec CPU per MiB: gzip alone vs gzip then AES-256-GCM, encode + decode,
//    on a compressible payload (a transcript) and an incompressible one.
// 3. Trace writer: lines per second with one writer process and with two
//    writing one run's trace at once (test/helpers/trace-process.ts, the lock's cost).
// 4. Signature verification: what the decide validator runs per signed
//    decision (common/signed-decision.ts checkSignature: the canonical base64
//    check, canonical JSON of the eight signed fields, Ed25519 verify in pure
//    JS, the SHA-256 message key single use is decided on), the first call
//    (tables built) and then warm, per verify; the same code the workflow
//    sandbox runs.
// BENCH_RUNS (default 5 each) sets how many runs per side; BENCH_ONLY=signatures runs only 4.
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Payload } from '@temporalio/common';
import type { RunResult } from '../common/contract.js';
import { EncryptionPayloadCodec, payloadCodecs } from '../node/payload-codec.js';
import type { PayloadKey } from '../node/payload-keys.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { argsHash } from '../common/args-hash.js';
import { checkSignature, newKeyPair, signDecision, type ApproverPolicy } from '../common/signed-decision.js';
import { privateKeyOf } from '../client/signing.js';
import { startProvider } from '../dev/provider/server.js';
import { createAgentWorker, WORKFLOWS_PATH } from '../worker/create-worker.js';
import { findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const TURNS = 20;
const KEYS: PayloadKey[] = [{ id: 'bench', key: new Uint8Array(randomBytes(32)) }];
const exec = promisify(execFile);
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
};
const fmt = (o: { min: number; median: number; max: number }, unit: string) => `min ${o.min.toFixed(2)} / median ${o.median.toFixed(2)} / max ${o.max.toFixed(2)} ${unit}`;

async function perTurn(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = mkdtempSync(join(tmpdir(), 'bench-trust-'));
  const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log') });
  const provider = await startProvider();
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } });
  const bundle = join(dir, 'bundle.js');
  writeFileSync(bundle, code);
  const workers: { worker: Worker; done: Promise<void> }[] = [];
  const sides: Record<'on' | 'off', { client: Client; taskQueue: string; ms: number[] }> = {} as never;
  for (const side of ['on', 'off'] as const) {
    const keys = side === 'on' ? KEYS : null;
    const taskQueue = `bench-${side}`;
    const w = await createAgentWorker({
      connection: await NativeConnection.connect({ address: server.address }),
      taskQueue,
      plugin: { model: { baseUrl: provider.url }, workspace: join(dir, 'ws'), traceDir: join(dir, 'traces'), payloadKeys: keys },
      workflowBundle: { codePath: bundle },
    });
    workers.push({ worker: w, done: w.run() });
    sides[side] = { client: new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: { payloadCodecs: payloadCodecs({ payloadKeys: keys }) } }), taskQueue, ms: [] };
  }
  const once = async (side: 'on' | 'off', i: number) => {
    const { client, taskQueue } = sides[side];
    const t0 = performance.now();
    const r = (await client.workflow.execute('agentRun', { taskQueue, workflowId: `bench-${side}-${i}`, args: [{ task: 'Which file mentions a timeout?', model: 'runaway', dedupe: 'off', limits: { maxTurns: TURNS, maxBudgetUsd: null } }] })) as RunResult;
    if (r.turns !== TURNS) throw new Error(`expected ${TURNS} turns, got ${r.turns}`);
    return (performance.now() - t0) / TURNS;
  };
  // One warm-up run each (bundle load, connections), not counted.
  await once('on', -1);
  await once('off', -1);
  for (let i = 0; i < RUNS; i++) for (const side of i % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) sides[side].ms.push(await once(side, i));
  console.log(`per turn, runaway maxTurns ${TURNS}, ${RUNS} runs each, interleaved:`);
  console.log(`  encryption off: ${fmt(stats(sides.off.ms), 'ms')}`);
  console.log(`  encryption on:  ${fmt(stats(sides.on.ms), 'ms')}`);
  for (const w of workers) {
    w.worker.shutdown();
    await w.done;
  }
  await provider.close();
  await server.stop();
}

async function codecCpu(): Promise<void> {
  const MiB = 1024 * 1024;
  const transcript = JSON.stringify(Array.from({ length: 6000 }, (_, i) => ({ role: i % 2 ? 'tool' : 'assistant', content: `turn ${i}: read_file errors.log → worker ${i % 9} timed out after 30000 ms` })));
  const inputs = { 'compressible (a transcript)': transcript.slice(0, MiB), incompressible: randomBytes(MiB * 0.75).toString('base64').slice(0, MiB) };
  console.log('codec CPU per MiB (encode + decode, 20 rounds):');
  for (const [name, text] of Object.entries(inputs)) {
    const p: Payload = { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify(text)) };
    const mib = p.data!.length / MiB;
    const aesOnly = [new EncryptionPayloadCodec(KEYS)];
    for (const [label, codecs] of [['gzip only', payloadCodecs({ payloadKeys: null })], ['gzip + AES-256-GCM', payloadCodecs({ payloadKeys: KEYS })], ['AES-256-GCM alone', aesOnly]] as const) {
      const round = async () => {
        let ps = [p];
        for (const c of codecs) ps = await c.encode(ps);
        for (const c of [...codecs].reverse()) ps = await c.decode(ps);
      };
      await round();
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < 20; i++) await round();
      const cpu = process.cpuUsage(cpu0);
      console.log(`  ${name}, ${label}: ${((cpu.user + cpu.system) / 1000 / 20 / mib).toFixed(2)} ms CPU per MiB`);
    }
  }
}

async function traceWriters(): Promise<void> {
  const tsx = join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx');
  const script = join(PROJECT_ROOT, 'test', 'helpers', 'trace-process.ts');
  const COUNT = 500;
  console.log(`trace writer (${COUNT} seqs per writer, 4 writes each: a line, its progress line, both repeated):`);
  for (const writers of [['A'], ['A', 'B']]) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-trace-'));
    const running = Promise.all(writers.map((w) => exec(tsx, [script, 'writer', dir, w, String(COUNT)], { cwd: PROJECT_ROOT })));
    while (!writers.every((w) => existsSync(join(dir, `ready-${w}`)))) await new Promise((r) => setTimeout(r, 20));
    writeFileSync(join(dir, 'go'), '');
    const outs = (await running).map((r) => JSON.parse(r.stdout) as { appended: number; duplicate: number; replaced: number; startedAt: number; endedAt: number });
    const span = (Math.max(...outs.map((o) => o.endedAt)) - Math.min(...outs.map((o) => o.startedAt))) / 1000;
    const written = outs.reduce((n, o) => n + o.appended + o.replaced, 0);
    const calls = outs.reduce((n, o) => n + o.appended + o.replaced + o.duplicate, 0);
    console.log(`  ${writers.length} writer${writers.length > 1 ? 's' : ''}: ${(written / span).toFixed(0)} lines written/s (${(calls / span).toFixed(0)} write calls/s, ${written} lines in ${span.toFixed(2)} s)`);
  }
}

function signatureVerify(): void {
  const alice = newKeyPair();
  const policy: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_file: ['alice'] } };
  const expected = { argsHash: argsHash({ path: 'access.log' }), callId: 'c2', callKey: 'bench-run@0193a6f2-7c1e-7d4b-9a51-2f0e8c3d4b6a/call2', decision: 'approve' as const, toolName: 'delete_file', workflowId: 'bench-run' };
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const sent = { ...expected, by: 'alice', expiresAt, signature: signDecision({ ...expected, by: 'alice', expiresAt }, privateKeyOf(alice.privateKey)) };
  const check = () => {
    if (!checkSignature(policy, ['alice'], 'tool delete_file', expected, sent, Date.now()).ok) throw new Error('the bench signature does not verify');
  };
  const t0 = performance.now();
  check();
  const first = performance.now() - t0;
  const ROUNDS = 10;
  const N = 200;
  const per: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    for (let i = 0; i < N; i++) check();
    per.push((performance.now() - t) / N);
  }
  console.log(`signature check (checkSignature: canonical base64, canonical JSON + Ed25519 verify, @noble/curves, message key): first call ${first.toFixed(2)} ms; warm, ${ROUNDS} rounds of ${N}: ${fmt(stats(per), 'ms per verify')}`);
}

signatureVerify();
if (process.env.BENCH_ONLY !== 'signatures') {
  await codecCpu();
  await traceWriters();
  if (process.env.BENCH_SKIP_RUNS !== '1') await perTurn();
}
