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
// 4. The whole stream (issue 34): BENCH_WHOLE_RUNS runs (default 20) of
//    BENCH_WHOLE_TURNS `narrated` turns (default 200), continuing as new about
//    every 5 turns, read by an AgentClient reader attached before the start
//    that sleeps BENCH_READER_SLEEP_MS (default 5) after every item: items
//    delivered against published (the stream's end offset), in order and
//    contiguous, and gap items.
// 5. How long a closing run waits for its readers: BENCH_DRAIN_RUNS `plan`
//    runs (about a second) read by a raw @temporalio/workflow-streams
//    subscriber from offset 0, and as many read by nobody: the time from the
//    drain's timer to the close, from each run's history (0 when it set none).
// BENCH_PARTS (comma-separated: cost, long, latency, whole, drain; default all) picks the parts.
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
import { dataConverter } from '../node/payload-codec.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { commitOf, minMedianMax, percentile, sorted } from './report.js';
import { AgentClient } from '../client/agent-client.js';
import { approveSignal, statusQuery, streamItemsQuery } from '../common/run-messages.js';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { RunEventItem } from '../common/stream-items.js';
import { countActions, type ActionCount } from './actions.js';
import type { AgentInput, RunResult } from '../common/contract.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 20);
const LONG_TURNS = Number(process.env.BENCH_LONG_TURNS ?? 200);
const TURNS = 20;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'cost,long,latency,whole,drain').split(','));
const WHOLE_RUNS = Number(process.env.BENCH_WHOLE_RUNS ?? 20);
const WHOLE_TURNS = Number(process.env.BENCH_WHOLE_TURNS ?? 200);
const READER_SLEEP_MS = Number(process.env.BENCH_READER_SLEEP_MS ?? 5);
const DRAIN_RUNS = Number(process.env.BENCH_DRAIN_RUNS ?? 20);
/** The runs' own continue-as-new threshold (the carried transcript counts: with it low, a long run continues every turn); see BENCH_SUGGEST_CAN_EVENTS. */
const WHOLE_CAN_BYTES = Number(process.env.BENCH_WHOLE_CAN_BYTES ?? 12_000);
type Setting = 'events, unread' | 'full, unread' | 'full, read along';
const SETTINGS: Setting[] = ['events, unread', 'full, unread', 'full, read along'];
const History = proto.temporal.api.history.v1.History;
const EventType = proto.temporal.api.enums.v1.EventType;

Runtime.install({ logger: new DefaultLogger('ERROR') });
const dir = mkdtempSync(join(tmpdir(), 'agent-bench-stream-'));
// BENCH_SUGGEST_CAN_EVENTS: the server suggests continue-as-new at that many events (part 4: about 5 turns with 80, whatever the transcript's size).
const suggestAt = process.env.BENCH_SUGGEST_CAN_EVENTS ? { 'limit.historyCount.suggestContinueAsNew': Number(process.env.BENCH_SUGGEST_CAN_EVENTS) } : {};
const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig: { ...AGENT_LOOP_DYNAMIC_CONFIG, ...suggestAt } });
const provider = await startProvider({});
const nc = await NativeConnection.connect({ address: server.address });
const workers: Worker[] = [];
for (const stream of ['full', 'events'] as const) {
  workers.push(await createAgentWorker({ connection: nc, taskQueue: stream, plugin: { stream, model: { baseUrl: provider.url }, workspace: join(dir, 'ws'), traceDir: join(dir, 'traces') } }));
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

interface Whole {
  published: number;
  delivered: number;
  inOrder: boolean;
  gaps: number;
  executions: number;
  ms: number;
}

/** A 200-turn run read whole by a reader that sleeps between items (part 4). */
async function wholeRun(): Promise<Whole> {
  const workflowId = `stream-whole-${++seq}`;
  const started = Date.now();
  const reader = agents('full');
  const got: RunEventItem[] = [];
  const reading = (async () => {
    for (;;) {
      try {
        for await (const item of reader.getHandle(workflowId).events(0)) {
          got.push(item);
          await new Promise((r) => setTimeout(r, READER_SLEEP_MS));
        }
        return;
      } catch (err) {
        if (!(err instanceof Error && err.name === 'RunNotFoundError')) throw err;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  })();
  const handle = await agents('full').start(
    { task: 'Keep an eye on the files.', model: 'narrated', dedupe: 'off', limits: { maxTurns: WHOLE_TURNS, maxBudgetUsd: null }, continueAsNewAtHistoryBytes: WHOLE_CAN_BYTES },
    { workflowId },
  );
  await handle.result();
  await reading;
  const published = (await client.workflow.getHandle(workflowId).query(streamItemsQuery, 0, 1)).end;
  const histories = await chainHistories(workflowId, handle.runId ?? '');
  return {
    published,
    delivered: got.filter((i) => i.type !== 'gap').length,
    inOrder: got.every((i, k) => i.offset === k),
    gaps: got.filter((i) => i.type === 'gap').length,
    executions: histories.length,
    ms: Date.now() - started,
  };
}

/** Part 5: how long the run waited between its drain timer and its close (0: no timer, nobody behind). */
async function closingWaitMs(rawReader: boolean): Promise<{ waitMs: number; readStopped: boolean | null }> {
  const workflowId = `stream-drain-${++seq}`;
  const handle = await agents('full').start({ task: 'Which file mentions a timeout?', model: 'plan', workspace: `drain-${seq}` }, { workflowId });
  let readStopped: boolean | null = null;
  if (rawReader) {
    let last = '';
    for await (const item of WorkflowStreamClient.create(client, workflowId).topic<{ type: string }>('events').subscribe(0)) last = item.data.type;
    readStopped = last === 'run_stopped';
  }
  await handle.result();
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const timer = events.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED).at(-1);
  const closed = events.at(-1);
  const ms = (e: typeof closed) => {
    const t = e?.eventTime;
    return t ? Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6) : 0;
  };
  return { waitMs: timer ? ms(closed) - ms(timer) : 0, readStopped };
}

const perTurn: Record<Setting, { actions: number[]; events: number[]; signals: number[]; updates: number[] }> = Object.fromEntries(
  SETTINGS.map((s) => [s, { actions: [], events: [], signals: [], updates: [] }]),
) as never;
let long = {} as Record<'events, unread' | 'full, read along', Measured>;
const latencies: number[] = [];
const wholeRuns: Whole[] = [];
const drains: { raw: { waitMs: number; readStopped: boolean | null }[]; nobody: { waitMs: number }[] } = { raw: [], nobody: [] };
try {
  for (const s of SETTINGS) await measure(s, 3); // warm-up: bundles loaded, connections open
  for (let round = 0; round < (PARTS.has('cost') ? ROUNDS : 0); round++) {
    const order = SETTINGS.map((_, i) => SETTINGS[(i + round) % SETTINGS.length]);
    for (const s of order) {
      const m = await measure(s, TURNS);
      perTurn[s].actions.push(m.actions.actions / m.turns);
      perTurn[s].events.push(m.actions.events / m.turns);
      perTurn[s].signals.push(m.actions.signals / m.turns);
      perTurn[s].updates.push(m.actions.updates / m.turns);
    }
  }
  if (PARTS.has('long')) long = { 'events, unread': await measure('events, unread', LONG_TURNS), 'full, read along': await measure('full, read along', LONG_TURNS) };
  for (let i = 0; i < (PARTS.has('latency') ? LATENCY_RUNS : 0); i++) latencies.push(await firstTokenLatencyMs());
  for (let i = 0; i < (PARTS.has('whole') ? WHOLE_RUNS : 0); i++) {
    wholeRuns.push(await wholeRun());
    console.log(`whole run ${i + 1}: ${JSON.stringify(wholeRuns.at(-1))}`);
  }
  for (let i = 0; i < (PARTS.has('drain') ? DRAIN_RUNS : 0); i++) {
    drains.raw.push(await closingWaitMs(true));
    drains.nobody.push(await closingWaitMs(false));
  }
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
const drainWaits = drains.raw.map((d) => d.waitMs);
const lines = [
  '# The live stream: cost and latency',
  '',
  `Commit ${commit}, ${new Date().toISOString()}. \`tsx bench/stream.ts\`: in-memory dev server, scripted provider at 5 ms between stream events, one worker per setting.`,
  '',
  `## Per turn of a ${TURNS}-turn \`narrated\` run (a sentence and a list_files call each turn), ${ROUNDS} interleaved rounds (min / median / max)`,
  '',
  '| setting | Actions per turn | of them signals | of them updates | history events per turn |',
  '|---|---|---|---|---|',
  ...(PARTS.has('cost') ? SETTINGS.map((s) => `| ${s} | ${minMedianMax(perTurn[s].actions)} | ${minMedianMax(perTurn[s].signals)} | ${minMedianMax(perTurn[s].updates)} | ${minMedianMax(perTurn[s].events)} |`) : ['(not measured)']),
  '',
  `## History over ${LONG_TURNS} turns of \`narrated\` (every execution of the continue-as-new chain)`,
  '',
  '| setting | executions | history KiB | KiB per turn | Actions per turn |',
  '|---|---|---|---|---|',
  ...(PARTS.has('long')
    ? (['events, unread', 'full, read along'] as const).map((s) => `| ${s} | ${long[s].executions} | ${kib(long[s].historyBytes)} | ${kib(long[s].historyBytes / long[s].turns)} | ${(long[s].actions.actions / long[s].turns).toFixed(2)} |`)
    : ['(not measured)']),
  '',
  `## Provider's first text → a subscriber in another process, ${LATENCY_RUNS} runs`,
  '',
  latencies.length ? `p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms (min ${sorted(latencies)[0].toFixed(0)}, max ${sorted(latencies).at(-1)!.toFixed(0)}).` : '(not measured)',
  '',
  `## The whole stream: ${wholeRuns.length} runs of ${WHOLE_TURNS} \`narrated\` turns, continuing as new at ${WHOLE_CAN_BYTES} history bytes, a reader attached before the start sleeping ${READER_SLEEP_MS} ms after each item`,
  '',
  '| run | executions | published | delivered | in order, contiguous | gap items | s |',
  '|---|---|---|---|---|---|---|',
  ...wholeRuns.map((w, i) => `| ${i + 1} | ${w.executions} | ${w.published} | ${w.delivered} | ${w.inOrder ? 'yes' : 'NO'} | ${w.gaps} | ${(w.ms / 1000).toFixed(1)} |`),
  '',
  `## How long a closing run waits for its readers: ${drains.raw.length} \`plan\` runs`,
  '',
  drainWaits.length
    ? `Read by a raw workflow-streams subscriber from 0: waited p50 ${percentile(drainWaits, 50).toFixed(0)} ms, p95 ${percentile(drainWaits, 95).toFixed(0)} ms, max ${sorted(drainWaits).at(-1)!.toFixed(0)} ms; ${drains.raw.filter((d) => d.readStopped).length} of ${drains.raw.length} subscribers read run_stopped. Read by nobody: ${drains.nobody.filter((d) => d.waitMs === 0).length} of ${drains.nobody.length} closed without waiting.`
    : '(not measured)',
  '',
];
writeFileSync(join(PROJECT_ROOT, 'reports', process.env.BENCH_REPORT ?? 'stream.md'), lines.join('\n'));
console.log(lines.join('\n'));
