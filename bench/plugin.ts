// AgentPlugin against the worker before it, on one fresh dev server with the
// scripted provider, in one process (so one native runtime):
// - a worker's start, Worker.create to polling (the server lists it among the
//   queue's pollers), both bundling their workflows at start: a team's worker
//   (its workflows module re-exporting agentRun, its activity, the plugin),
//   the standalone worker's createAgentWorker (now through the plugin), and
//   the baseline's createAgentWorker;
// - the workflow bundle's size: the team's module through the plugin, the
//   harness's workflows (now and in the baseline);
// - per turn of a 20-turn `runaway` run, on the team's worker and on the
//   baseline's, interleaved (one run at a time, alternating which goes first).
//
// The baseline is a checkout of the code before the plugin, with this
// checkout's node_modules (so both use one SDK):
//   mkdir /tmp/base && git archive fb1de20 | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
//   tsx bench/plugin.ts --baseline /tmp/base [--rounds 8] [--starts 3]
import { SEED_FILES } from '../activities/tools/workspace.js';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startProvider } from '../dev/provider/server.js';
import { findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { AgentPlugin } from '../worker/index.js';
import { createAgentWorker, WORKFLOWS_PATH } from '../worker/create-worker.js';
import { queuePollers } from '../node/queue-pollers.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import * as teamActivities from '../test/fixtures/team/activities.js';

const { values: args } = parseArgs({ options: { baseline: { type: 'string' }, rounds: { type: 'string', default: '8' }, starts: { type: 'string', default: '3' }, turns: { type: 'string', default: '20' } } });
if (!args.baseline) {
  console.error('usage: tsx bench/plugin.ts --baseline DIR [--rounds 8] [--starts 3] [--turns 20]  (DIR: a checkout before the plugin; see the header)');
  process.exit(2);
}
const BASE = resolve(args.baseline);
const ROUNDS = Number(args.rounds);
const STARTS = Number(args.starts);
const TURNS = Number(args.turns);
const TEAM_WORKFLOWS = fileURLToPath(new URL('../test/fixtures/team/workflows.ts', import.meta.url));

interface BaselineWorkerModule {
  WORKFLOWS_PATH: string;
  createAgentWorker(opts: { connection: NativeConnection; taskQueue: string; llmBaseUrl: string; workspaceRoot: string; traceDir: string; workflowBundle?: { code: string } }): Promise<Worker>;
}
const baseline = (await import(pathToFileURL(join(BASE, 'worker/create-worker.ts')).href)) as BaselineWorkerModule;

Runtime.install({ logger: new DefaultLogger('ERROR') });
const dir = mkdtempSync(join(tmpdir(), 'bench-plugin-'));
const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log') });
const provider = await startProvider();
const connection = await NativeConnection.connect({ address: server.address });
const client = new Client({ connection: await Connection.connect({ address: server.address }), plugins: [AgentPlugin.forClient()] });
const quiet = { log: () => {}, trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: console.error };
const folders = () => ({ workspace: mkdtempSync(join(dir, 'ws-')), traceDir: mkdtempSync(join(dir, 'tr-')) });

type Kind = 'plugin (team worker)' | 'createAgentWorker (now)' | 'createAgentWorker (baseline)';

/** Prebuilt bundles, for the starts that isolate what a worker does besides bundling (null: bundle at start). */
let prebuilt: { team: string; now: string; baseline: string } | null = null;

async function create(kind: Kind, taskQueue: string): Promise<Worker> {
  const f = folders();
  switch (kind) {
    case 'plugin (team worker)':
      return Worker.create({
        connection,
        taskQueue,
        ...(prebuilt ? { workflowBundle: { code: prebuilt.team } } : { workflowsPath: TEAM_WORKFLOWS }),
        activities: { ...teamActivities },
        plugins: [new AgentPlugin({ model: { baseUrl: provider.url }, workspace: f.workspace, traceDir: f.traceDir, builtinTools: true, seedFiles: SEED_FILES, log: { log: () => {}, warn: console.warn } })],
      });
    case 'createAgentWorker (now)':
      return createAgentWorker({ connection, taskQueue, plugin: { model: { baseUrl: provider.url }, workspace: f.workspace, traceDir: f.traceDir }, ...(prebuilt ? { workflowBundle: { code: prebuilt.now } } : {}) });
    case 'createAgentWorker (baseline)':
      return baseline.createAgentWorker({ connection, taskQueue, llmBaseUrl: provider.url, workspaceRoot: f.workspace, traceDir: f.traceDir, ...(prebuilt ? { workflowBundle: { code: prebuilt.baseline } } : {}) });
  }
}

/** Worker.create to the moment the server lists the worker as a poller of its queue; the worker is left running. */
async function timedStart(kind: Kind): Promise<{ ms: number; createMs: number; worker: Worker; taskQueue: string; done: Promise<void> }> {
  const taskQueue = `bench-${randomUUID().slice(0, 8)}`;
  const t0 = performance.now();
  const worker = await create(kind, taskQueue);
  const createMs = performance.now() - t0;
  const done = worker.run();
  for (;;) {
    const pollers = await queuePollers(connection, 'default', taskQueue);
    if (pollers.some((p) => p.live)) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  return { ms: performance.now() - t0, createMs, worker, taskQueue, done };
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2, max: s[s.length - 1] };
};
const fmt = (x: { min: number; median: number; max: number }, digits = 0) => `min ${x.min.toFixed(digits)} / median ${x.median.toFixed(digits)} / max ${x.max.toFixed(digits)}`;

try {
  // Bundle sizes (what each worker bundles at start; no tracing, so no interceptor modules).
  const bundles = {
    team: (await bundleWorkflowCode({ workflowsPath: TEAM_WORKFLOWS, plugins: [new AgentPlugin({ model: { baseUrl: provider.url }, workspace: folders().workspace })], logger: quiet })).code,
    now: (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet })).code,
    baseline: (await bundleWorkflowCode({ workflowsPath: baseline.WORKFLOWS_PATH, logger: quiet })).code,
  };
  const sizes = {
    'team module through the plugin': bundles.team.length,
    'harness workflows (now)': bundles.now.length,
    'harness workflows (baseline)': bundles.baseline.length,
  };
  console.log('workflow bundle size');
  for (const [k, v] of Object.entries(sizes)) console.log(`  ${k}: ${v} bytes (${(v / 1024).toFixed(0)} KiB)`);

  // Starts, interleaved: each kind once per round, the order rotating; first
  // bundling at start (what a worker does), then from prebuilt bundles (what
  // it does besides bundling: the plugin's checks, the native worker).
  const kinds: Kind[] = ['plugin (team worker)', 'createAgentWorker (now)', 'createAgentWorker (baseline)'];
  const keep = new Map<Kind, { worker: Worker; taskQueue: string; done: Promise<void> }>();
  for (const mode of ['bundling at start', 'prebuilt bundle'] as const) {
    prebuilt = mode === 'prebuilt bundle' ? bundles : null;
    const n = mode === 'prebuilt bundle' ? STARTS * 3 : STARTS;
    const starts = new Map<Kind, { ms: number[]; createMs: number[] }>(kinds.map((k) => [k, { ms: [], createMs: [] }]));
    for (let round = 0; round < n; round++) {
      for (let i = 0; i < kinds.length; i++) {
        const kind = kinds[(i + round) % kinds.length];
        const s = await timedStart(kind);
        starts.get(kind)?.ms.push(s.ms);
        starts.get(kind)?.createMs.push(s.createMs);
        const prior = keep.get(kind);
        keep.set(kind, s);
        if (prior) {
          prior.worker.shutdown();
          await prior.done;
        }
      }
    }
    console.log(`worker start, ${mode}: Worker.create to polling (${n} each, ms)`);
    for (const [k, v] of starts) console.log(`  ${k}: ${fmt(stats(v.ms))}  (Worker.create alone: ${fmt(stats(v.createMs))})`);
  }

  // Per turn: runaway runs of TURNS turns, one at a time, alternating.
  const perTurn = new Map<Kind, number[]>([
    ['plugin (team worker)', []],
    ['createAgentWorker (baseline)', []],
  ]);
  const input: AgentInput = { task: 'Keep listing. [bench-plugin]', model: 'runaway', limits: { maxTurns: TURNS } };
  const order: Kind[] = ['plugin (team worker)', 'createAgentWorker (baseline)'];
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of round % 2 ? [...order].reverse() : order) {
      const w = keep.get(kind);
      if (!w) throw new Error(`no ${kind} worker`);
      const t0 = performance.now();
      const r = (await client.workflow.execute('agentRun', { taskQueue: w.taskQueue, workflowId: `bench-plugin-${randomUUID().slice(0, 8)}`, args: [input] })) as RunResult;
      const ms = performance.now() - t0;
      if (r.turns !== TURNS) throw new Error(`${kind}: the run took ${r.turns} turns (${r.status}), not ${TURNS}`);
      perTurn.get(kind)?.push(ms / TURNS);
    }
  }
  console.log(`per turn of a ${TURNS}-turn runaway run (${ROUNDS} runs each, interleaved, ms)`);
  for (const [k, v] of perTurn) console.log(`  ${k}: ${fmt(stats(v), 1)}`);
  for (const w of keep.values()) w.worker.shutdown();
  await Promise.all([...keep.values()].map((w) => w.done));
} finally {
  await client.connection.close();
  await connection.close();
  await provider.close();
  await server.stop();
}
