// `npm run bench`: our harness beside the floor (the same agent as a plain
// in-process loop) and the closest peer (@temporalio/ai-sdk running the same
// agent as a workflow on the same server), interleaved within one run, on the
// server settings this project ships and on the dev server's defaults. Then
// throughput (concurrent runs), and what a run costs the server beside the
// peer: Actions per turn, heartbeats per minute of a running call, and how
// fast a Stop reaches a running call in the loop's process and in another
// (./bill.ts), what a run leaves on the worker's disk (./disk.ts), and what
// counting tokens costs the event loop (./tokens.ts, no stack needed).
// BENCH_PARTS=time,throughput,bill,disk,tokens picks parts;
// BENCH_CONCURRENT and BENCH_THROUGHPUT_ROUNDS size the throughput part
// (./throughput.ts), BENCH_STOPS and BENCH_BILL_SECONDS the last.
// Every figure is min/median/max over the repetitions, with ratios taken
// inside each repetition; the report goes to reports/bench.md with its commit.
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { PROJECT_ROOT } from '../node/project-root.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import { runFloor } from './floor.js';
import { startBenchStack, type BenchStack } from './stack.js';
import { runPeer, startPeer } from './peer-process.js';
import { describeActions, type ActionCount } from './actions.js';
import { measureActions, measureHeartbeats, measureStops, withPeerStack } from './bill.js';
import { measureThroughput, type ThroughputFigures } from './throughput.js';
import { measureDisk } from './disk.js';
import { measureTokens } from './tokens.js';
import { DEFAULT_HEARTBEAT_MS } from '../node/heartbeat.js';
import { startingAttributes } from '../workflows/visibility.js';

const REPS = Number(process.env.BENCH_REPS ?? 3);
const TURNS = 20;
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 200);
/** Rounds of CONCURRENT runs each side in the throughput part (ours, peer, ours, …). */
const THROUGHPUT_ROUNDS = Number(process.env.BENCH_THROUGHPUT_ROUNDS ?? 3);
const STOPS = Number(process.env.BENCH_STOPS ?? 20);
/** How long the call is held whose heartbeats are counted. */
const BILL_SECONDS = Number(process.env.BENCH_BILL_SECONDS ?? 60);
/** Which parts run (BENCH_PARTS=time,throughput,bill,disk,tokens; default all). */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'time,throughput,bill,disk,tokens').split(','));

type Stat = { min: number; median: number; max: number };
const stat = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor((s.length - 1) / 2)], max: s[s.length - 1] };
};
const fmt = (s: Stat, digits = 1) => `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];
let seq = 0;

async function msPerTurn(stack: BenchStack, variant: 'floor' | 'ours' | 'peer'): Promise<number> {
  const t0 = performance.now();
  let turns: number;
  if (variant === 'floor') {
    turns = (await runFloor(stack.providerUrl, 'runaway', TURNS)).turns;
  } else if (variant === 'ours') {
    const input: AgentInput = { task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: TURNS, maxBudgetUsd: null } };
    // Started as the CLI starts runs: its starting search attributes set (no upsert at its start).
    const r = (await stack.client.workflow.execute('agentRun', { taskQueue: stack.taskQueue, workflowId: `cmp-ours-${++seq}`, args: [input], typedSearchAttributes: startingAttributes(input) })) as RunResult;
    turns = r.turns;
  } else {
    turns = await runPeer(stack.client, `cmp-peer-${++seq}`, 'runaway', TURNS);
  }
  if (turns !== TURNS) throw new Error(`${variant} took ${turns} turns, expected ${TURNS}`);
  return (performance.now() - t0) / turns;
}

interface Comparison {
  server: string;
  perTurn: Record<'floor' | 'ours' | 'peer', number[]>;
  oursOverFloor: number[];
  oursOverPeer: number[];
}

async function compare(server: string, dynamicConfig: Record<string, unknown>): Promise<Comparison> {
  const stack = await startBenchStack({ dynamicConfig });
  const peer = await startPeer(stack);
  const running = [stack.worker.run()];
  const out: Comparison = { server, perTurn: { floor: [], ours: [], peer: [] }, oursOverFloor: [], oursOverPeer: [] };
  try {
    for (const v of ['floor', 'ours', 'peer'] as const) await msPerTurn(stack, v); // warm-up
    const orders = [['floor', 'ours', 'peer'], ['ours', 'peer', 'floor'], ['peer', 'floor', 'ours']] as const;
    for (let rep = 0; rep < REPS; rep++) {
      const row: Partial<Record<'floor' | 'ours' | 'peer', number>> = {};
      for (const v of orders[rep % orders.length]) row[v] = await msPerTurn(stack, v);
      for (const v of ['floor', 'ours', 'peer'] as const) out.perTurn[v].push(row[v]!);
      out.oursOverFloor.push(row.ours! / row.floor!);
      out.oursOverPeer.push(row.ours! / row.peer!);
    }
  } finally {
    stack.worker.shutdown();
    peer.kill('SIGTERM');
    await Promise.all(running);
    await stack.close();
  }
  return out;
}

const lines: string[] = [];
const say = (l: string) => {
  console.log(l);
  lines.push(l);
};
const commit = execSync('git rev-parse --short HEAD', { cwd: PROJECT_ROOT }).toString().trim();
say(`# Benchmark (commit ${commit}, ${new Date().toISOString().slice(0, 10)}, ${REPS} repetitions, interleaved)`);
say('');
if (PARTS.has('time')) {
  say(`Per-turn wall time of a ${TURNS}-turn \`runaway\` run (a model call and a list_files call per turn, scripted provider at 0 ms): min / median / max.`);
  say('');
  say('| server | floor: in-process loop (ms/turn) | ours (ms/turn) | peer: @temporalio/ai-sdk (ms/turn) | ours ÷ floor | ours ÷ peer |');
  say('|---|---|---|---|---|---|');
  for (const [name, cfg] of [
    ['shipped settings (transferProcessorMaxPollRPS 1000)', {}],
    ['dev-server defaults (20/s)', { 'history.transferProcessorMaxPollRPS': 20 }],
    // What eager activity dispatch (on in the shipped settings) saves a turn: the same server with it off.
    ['shipped settings, eager dispatch off', { 'system.enableActivityEagerExecution': false }],
  ] as const) {
    const c = await compare(name, cfg);
    say(`| ${name} | ${fmt(stat(c.perTurn.floor))} | ${fmt(stat(c.perTurn.ours))} | ${fmt(stat(c.perTurn.peer))} | ${fmt(stat(c.oursOverFloor), 2)}× | ${fmt(stat(c.oursOverPeer), 2)}× |`);
  }
}
say('');
if (PARTS.has('throughput')) {
  for (const l of throughputSection(await measureThroughput(CONCURRENT, THROUGHPUT_ROUNDS))) say(l);
}
if (PARTS.has('bill')) {
  for (const l of await billSection()) say(l);
}
if (PARTS.has('disk')) {
  for (const l of await diskSection()) say(l);
}
if (PARTS.has('tokens')) {
  for (const l of await tokensSection()) say(l);
}
writeFileSync(`${PROJECT_ROOT}/reports/bench.md`, lines.join('\n') + '\n');

/** Actions per turn ours vs the peer, heartbeats per minute of a running call, and Stop both ways (./bill.ts). */
async function billSection(): Promise<string[]> {
  const out: string[] = ['## What a run costs the server (Temporal Cloud Actions)', ''];
  const { a, hb } = await withPeerStack(async (stack) => ({ a: await measureActions(stack, TURNS), hb: await measureHeartbeats(stack, BILL_SECONDS) }));
  const perTurn = (c: ActionCount) => (c.actions / a.turns).toFixed(2);
  out.push(`A ${a.turns}-turn \`runaway\` run, Actions by Temporal Cloud's rules, counted from its history (heartbeats and queries are not in history: see below).`, '');
  out.push('| | Actions (Cloud\'s rules) | per turn | the server\'s `action` counter | events | breakdown |', '|---|---|---|---|---|---|');
  for (const [name, c] of [
    ['ours, started by the CLI', a.ours],
    ['ours, started bare (`temporal workflow start`)', a.oursBare],
    ['peer: @temporalio/ai-sdk', a.peer],
    ['ours, `runaway_wide` (three read-only calls a turn)', a.wide],
    ['peer, `runaway_wide`', a.peerWide],
  ] as const) {
    const server = Object.entries(c.server.byType).map(([t, n]) => `${t} ${n}`).join(', ');
    out.push(`| ${name} | ${c.actions} | ${perTurn(c)} | ${c.server.total} (${server}) | ${c.events} | ${describeActions(c)} |`);
  }
  out.push('', 'A turn of `runaway` makes one read-only call, a turn of `runaway_wide` three. Ours runs read-only tools as local activities, whose markers in one workflow task are one Action however many; the peer runs each tool call as an activity.');
  out.push('', 'The server\'s counter (`action{service_name="frontend"}`, which Temporal documents for estimating a Cloud bill from a self-hosted server) meters a workflow task\'s markers as one batch, as Cloud does, but also counts the `TemporalChangeVersion` upserts of patches, which Cloud exempts.');
  out.push('', `A \`plan\` run (3 turns): ${a.plan.events} events, ${a.plan.upserts} upserts (${a.plan.patchUpserts} for the patch), ${a.plan.patchMarkers + a.plan.localActivities} markers (${a.plan.patchMarkers} patch, ${a.plan.localActivities} local activities), ${a.plan.actions} Actions; started bare: ${a.planBare.events} events, ${a.planBare.upserts} upserts, ${a.planBare.actions} Actions.`, '');
  out.push(`Heartbeat RPCs per minute of a running call (one call held ${hb.seconds} s; the server's \`service_requests{operation="RecordActivityTaskHeartbeat"}\`): ours, model call ${hb.oursModel.toFixed(1)}, tool ${hb.oursTool.toFixed(1)}; peer, model call ${hb.peerModel.toFixed(1)} (its activities never heartbeat, so a Stop cannot reach them).`, '');
  out.push(`Stop → the running call sees it (\`tool_cancelled\`, \`model_cancelled\`) and → the run's result, ms, p50 / p95 / max of ${STOPS} Stops each, at random moments of the ${DEFAULT_HEARTBEAT_MS} ms heartbeat interval:`, '');
  out.push('| the call runs in | tool: sees it | tool: result | model: sees it | model: result |', '|---|---|---|---|---|');
  for (const [where, name] of [['same', 'the worker process that runs the loop'], ['other', 'another worker process']] as const) {
    const s = await measureStops(where, STOPS);
    const row = (xs: number[]) => `${pct(xs, 0.5)} / ${pct(xs, 0.95)} / ${Math.max(...xs)}`;
    out.push(`| ${name} | ${row(s.tool)} | ${row(s.toolResult)} | ${row(s.model)} | ${row(s.modelResult)} |`);
  }
  return out;
}

/** What a 100-turn and a 1,000-turn run leave on the worker's disk (./disk.ts). */
async function diskSection(): Promise<string[]> {
  const out = ['## What a run leaves on the worker\'s disk', '', 'A `runaway` run (a list_files call a turn, dedupe off), each length on a fresh stack: the message store, the trace and the effect ledger, in bytes of files.', ''];
  out.push('| turns | executions | message store | per turn | trace | per turn | ledger |', '|---|---|---|---|---|---|---|');
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  for (const turns of [100, 1000]) {
    const d = await measureDisk(turns);
    out.push(`| ${turns} | ${d.executions} | ${kb(d.messages.bytes)} (${d.messages.files} files) | ${(d.messages.bytes / turns).toFixed(0)} B | ${kb(d.traces.bytes)} | ${(d.traces.bytes / turns).toFixed(0)} B | ${d.ledger.files} files |`);
  }
  return out;
}

/** Token counting, js-tiktoken's encoder beside ours, and the event loop's longest stall (./tokens.ts). */
async function tokensSection(): Promise<string[]> {
  const out = ['## What counting tokens costs the event loop', ''];
  out.push('o200k_base counts as the model activity (hard budgets, replies without usage) and the scripted provider make them. Before: js-tiktoken\'s encoder; after: node/tokens.ts (the same tokens, checked on each text before timing). Medians of 3-5 calls.', '');
  out.push('| text | before: ms per 100 KB | js-tiktoken at 1 / 2 / 4 KB (ms) | after: ms per 100 KB | after: ms per MB | async: ms per MB | async: longest event-loop stall (ms) |', '|---|---|---|---|---|---|---|');
  for (const c of await measureTokens()) {
    const before = c.beforeExtrapolated ? `~ ${Math.round(c.beforeMsPer100KB).toLocaleString('en')} (extrapolated)` : c.beforeMsPer100KB.toFixed(1);
    const small = c.beforeSmall ? c.beforeSmall.map((x) => x.toFixed(0)).join(' / ') : '—';
    out.push(`| ${c.name} | ${before} | ${small} | ${c.afterMsPer100KB.toFixed(1)} | ${c.afterMsPerMB.toFixed(0)} | ${c.asyncMsPerMB.toFixed(0)} | ${c.asyncMaxStallMs.toFixed(1)} |`);
  }
  out.push('', 'A run is one pre-tokenized piece: js-tiktoken\'s merge rescans the whole piece after every merge, so it is quadratic; its 100 KB figure is the 4 KB time × 25² (from 1 to 4 KB its time grows ×4 per doubling, a square; at 8 KB it has been seen to grow faster). Ours merges over a min-heap of adjacent pairs (O(n log n)); its async API yields to the event loop every ~10 ms (monitorEventLoopDelay at 1 ms resolution, max over the count).');
  return out;
}

/** Runs/s, server CPU and history per `plan` run, ours beside the peer (./throughput.ts). */
function throughputSection(t: ThroughputFigures): string[] {
  const n = t.rounds.ours.length;
  const side = (s: 'ours' | 'peer') => {
    const r = t.rounds[s];
    const h = t.histories[s];
    const counts = (f: (c: ActionCount) => number) => fmt(stat(h.map(f)), 0);
    return `${fmt(stat(r.map((x) => x.runsPerSec)))} | ${fmt(stat(r.map((x) => x.serverCpuMsPerRun)))} | ${fmt(stat(r.map((x) => x.clientSideCpuMsPerRun)))} | ${counts((c) => c.events)} | ${counts((c) => c.upserts)} | ${counts((c) => c.localActivities + c.patchMarkers)} | ${counts((c) => c.actions)}`;
  };
  return [
    '## Throughput and server work per run',
    '',
    `${t.concurrent} concurrent \`plan\` runs (3 turns: list_files, read_file, the answer) per round, ${n} rounds each on one dev server, interleaved (ours, peer, ours, …); ours started as \`agent-harness run\` starts them. Server CPU: the dev server process's utime + stime (/proc) from before a round to when it is idle after it, per run. Client-side CPU: every other process (the bench's: client, scripted provider, our worker; and the peer's worker process). History: the first ${t.histories.ours.length / n} runs of each round. min / median / max over rounds.`,
    '',
    '| | runs/s | server CPU ms/run | client-side CPU ms/run | events/run | upserts/run | markers/run | Actions/run |',
    '|---|---|---|---|---|---|---|---|',
    `| ours | ${side('ours')} |`,
    `| peer: @temporalio/ai-sdk | ${side('peer')} |`,
    '',
    `Ours ÷ peer within each pair of rounds: runs/s ${fmt(stat(t.runsPerSecRatio), 2)}×, server CPU per run ${fmt(stat(t.serverCpuRatio), 2)}×.`,
    '',
  ];
}
