// What the live stream costs the server and how fast it reaches a person.
// One in-memory dev server (the shipped dynamic config), the scripted provider
// at its default pacing (5 ms between stream events), two workers on queues of
// their own: `full` (the model's text and tool progress published, the
// default) and `events` (trace events only: the workflow publishes them itself).
//
// 1. Actions and events per turn of a 20-turn `narrated` run (a sentence and a
//    list_files call each turn), read from its history by Cloud's rules
//    (./actions.ts): `events` with nobody reading, `full` with nobody reading,
//    `full` with a subscriber reading along. Interleaved rounds.
// 2. History bytes per turn of a 200-turn `narrated` run (every execution of
//    its continue-as-new chain), `events` unread against `full` read along.
// 3. Time from the provider writing a reply's first text to a subscriber in
//    another process (test/helpers/stream-subscriber.ts) receiving it: p50 /
//    p95 over BENCH_LATENCY_RUNS runs (default 20). The subscriber attaches
//    while the run is parked on an approval, then the answer streams.
// `tsx bench/stream.ts`; writes reports/stream.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { AGENT_LOOP_DYNAMIC_CONFIG, findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { startProvider } from '../dev/provider/server.js';
import { providerRequests } from '../dev/provider/control.js';
import { createAgentWorker } from '../worker/create-worker.js';
import { dataConverter } from '../common/payload-codec.js';
import { PROJECT_ROOT } from '../common/project-root.js';
import { commitOf, minMedianMax, percentile, sorted } from './report.js';
import { AgentClient } from '../client/agent-client.js';
import { approveSignal, statusQuery } from '../common/run-messages.js';
import { countActions, type ActionCount } from './actions.js';
import type { AgentInput, RunResult } from '../common/contract.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 20);
const LONG_TURNS = Number(process.env.BENCH_LONG_TURNS ?? 200);
const TURNS = 20;
type Setting = 'events, unread' | 'full, unread' | 'full, read along';
const SETTINGS: Setting[] = ['events, unread', 'full, unread', 'full, read along'];
const History = proto.temporal.api.history.v1.History;
const EventType = proto.temporal.api.enums.v1.EventType;

Runtime.install({ logger: new DefaultLogger('ERROR') });
const dir = mkdtempSync(join(tmpdir(), 'agent-bench-stream-'));
const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig: AGENT_LOOP_DYNAMIC_CONFIG });
const provider = await startProvider({});
const nc = await NativeConnection.connect({ address: server.address });
const workers: Worker[] = [];
for (const stream of ['full', 'events'] as const) {
  workers.push(await createAgentWorker({ connection: nc, taskQueue: stream, stream, llmBaseUrl: provider.url, workspaceRoot: join(dir, 'ws'), traceDir: join(dir, 'traces') }));
}
const running = workers.map((w) => w.run());
const client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: dataConverter() });
const agents = (queue: string) => new AgentClient({ client, taskQueue: queue });

let seq = 0;
/** Every execution's history of a run, following its continue-as-new chain from the first. */
async function chainHistories(workflowId: string, firstRunId: string) {
  const out = [];
  let runId: string | null | undefined = firstRunId;
  while (runId) {
    const h = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    out.push(h);
    const last = h.events?.at(-1);
    runId = last?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW ? last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId : null;
  }
  return out;
}

interface Measured {
  turns: number;
  actions: ActionCount;
  historyBytes: number;
  executions: number;
}

async function measure(setting: Setting, turns: number): Promise<Measured> {
  const queue = setting.startsWith('full') ? 'full' : 'events';
  const input: AgentInput = { task: 'Keep an eye on the files.', model: 'narrated', dedupe: 'off', limits: { maxTurns: turns, maxBudgetUsd: null } };
  const handle = await agents(queue).start(input, { workflowId: `stream-bench-${++seq}` });
  // Read along in this process: the same polls a subscriber elsewhere sends.
  const reading =
    setting === 'full, read along'
      ? (async () => {
          for await (const _ of handle.events(0)) void _;
        })()
      : Promise.resolve();
  const r: RunResult = await handle.result();
  await reading;
  if (r.turns !== turns) throw new Error(`${setting}: ${r.turns} turns (${r.status}), expected ${turns}`);
  const histories = await chainHistories(handle.workflowId, handle.runId ?? '');
  return { turns, actions: countActions(histories), historyBytes: histories.reduce((n, h) => n + History.encode(History.fromObject(h)).finish().length, 0), executions: histories.length };
}

/** One latency sample: the subscriber attached to a parked run; the answer after the approval streams. */
async function firstTokenLatencyMs(): Promise<number> {
  const workflowId = `stream-latency-${++seq}`;
  const tag = `[lat-${seq}]`;
  const handle = await agents('full').start({ task: `Delete the old logs. ${tag}`, model: 'destructive', workspace: `lat-${seq}` }, { workflowId });
  for (;;) {
    const s = await handle.workflow.query(statusQuery);
    if (s.interruption?.type === 'approval') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/stream-subscriber.ts', server.address, workflowId], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let attached: () => void = () => undefined;
  const isAttached = new Promise<void>((r) => (attached = r));
  let firstToken: number | null = null;
  const done = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (text) => {
      attached();
      const l = JSON.parse(text) as { type?: string; turn?: number; receivedAt?: number };
      if (l.type === 'token' && l.turn === 3 && firstToken === null) firstToken = l.receivedAt ?? null;
    });
    child.on('exit', () => resolve());
  });
  await isAttached;
  await handle.workflow.signal(approveSignal, { callId: 'c2', by: 'bench' });
  await handle.result();
  await done;
  const answer = (await providerRequests(provider.url, tag)).at(-1);
  if (firstToken === null || answer?.firstTextAt === undefined) throw new Error(`${workflowId}: no first token seen (${String(firstToken)}, ${String(answer?.firstTextAt)})`);
  return firstToken - answer.firstTextAt;
}

const perTurn: Record<Setting, { actions: number[]; events: number[]; signals: number[]; updates: number[] }> = Object.fromEntries(
  SETTINGS.map((s) => [s, { actions: [], events: [], signals: [], updates: [] }]),
) as never;
let long: Record<'events, unread' | 'full, read along', Measured>;
const latencies: number[] = [];
try {
  for (const s of SETTINGS) await measure(s, 3); // warm-up: bundles loaded, connections open
  for (let round = 0; round < ROUNDS; round++) {
    const order = SETTINGS.map((_, i) => SETTINGS[(i + round) % SETTINGS.length]);
    for (const s of order) {
      const m = await measure(s, TURNS);
      perTurn[s].actions.push(m.actions.actions / m.turns);
      perTurn[s].events.push(m.actions.events / m.turns);
      perTurn[s].signals.push(m.actions.signals / m.turns);
      perTurn[s].updates.push(m.actions.updates / m.turns);
    }
  }
  long = { 'events, unread': await measure('events, unread', LONG_TURNS), 'full, read along': await measure('full, read along', LONG_TURNS) };
  for (let i = 0; i < LATENCY_RUNS; i++) latencies.push(await firstTokenLatencyMs());
} finally {
  for (const w of workers) w.shutdown();
  await Promise.all(running);
  await client.connection.close();
  await nc.close();
  await provider.close();
  await server.stop();
}

const commit = commitOf();
const kib = (n: number) => (n / 1024).toFixed(2);
const lines = [
  '# The live stream: cost and latency',
  '',
  `Commit ${commit}, ${new Date().toISOString()}. \`tsx bench/stream.ts\`: in-memory dev server, scripted provider at 5 ms between stream events, one worker per setting.`,
  '',
  `## Per turn of a ${TURNS}-turn \`narrated\` run (a sentence and a list_files call each turn), ${ROUNDS} interleaved rounds (min / median / max)`,
  '',
  '| setting | Actions per turn | of them signals | of them updates | history events per turn |',
  '|---|---|---|---|---|',
  ...SETTINGS.map((s) => `| ${s} | ${minMedianMax(perTurn[s].actions)} | ${minMedianMax(perTurn[s].signals)} | ${minMedianMax(perTurn[s].updates)} | ${minMedianMax(perTurn[s].events)} |`),
  '',
  `## History over ${LONG_TURNS} turns of \`narrated\` (every execution of the continue-as-new chain)`,
  '',
  '| setting | executions | history KiB | KiB per turn | Actions per turn |',
  '|---|---|---|---|---|',
  ...(['events, unread', 'full, read along'] as const).map((s) => `| ${s} | ${long[s].executions} | ${kib(long[s].historyBytes)} | ${kib(long[s].historyBytes / long[s].turns)} | ${(long[s].actions.actions / long[s].turns).toFixed(2)} |`),
  '',
  `## Provider's first text → a subscriber in another process, ${LATENCY_RUNS} runs`,
  '',
  `p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms (min ${sorted(latencies)[0].toFixed(0)}, max ${sorted(latencies).at(-1)!.toFixed(0)}).`,
  '',
];
writeFileSync(join(PROJECT_ROOT, 'reports', 'stream.md'), lines.join('\n'));
console.log(lines.join('\n'));
