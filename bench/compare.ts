// `npm run bench`: our harness beside the floor (the same agent as a plain
// in-process loop) and the closest peer (@temporalio/ai-sdk running the same
// agent as a workflow on the same server), interleaved within one run, each
// streamed and unstreamed, with the Actions per turn each row costs
// (./turns.ts; the scripted provider's one time model for all rows:
// PROVIDER_FIRST_TOKEN_MS, PROVIDER_MS_PER_TOKEN, default 0), on the server
// settings this project ships (BENCH_DEV_DEFAULTS=1: and on the dev server's
// defaults). BENCH_REPS and BENCH_TURNS size that part. Then
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
import { cpus, loadavg } from 'node:os';
import { fmt, interleaved, ratios, startTurnStack, stat, timeModel, VARIANT_NAMES, VARIANTS, type Rounds, type Variant } from './turns.js';
import { describeActions, type ActionCount } from './actions.js';
import { measureActions, measureHeartbeats, measureStops, withPeerStack } from './bill.js';
import { measureThroughput, type ThroughputFigures } from './throughput.js';
import { measureDisk } from './disk.js';
import { measureTokens } from './tokens.js';
import { DEFAULT_HEARTBEAT_MS } from '../node/heartbeat.js';

const REPS = Number(process.env.BENCH_REPS ?? 5);
const TURNS = Number(process.env.BENCH_TURNS ?? 20);
/** The per-turn rows' scenario: every reply says a sentence beside its call, so a streamed reply carries text. */
const TURN_MODEL = 'narrated';
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 200);
/** Rounds of CONCURRENT runs each side in the throughput part (ours, peer, ours, …). */
const THROUGHPUT_ROUNDS = Number(process.env.BENCH_THROUGHPUT_ROUNDS ?? 3);
const STOPS = Number(process.env.BENCH_STOPS ?? 10);
/** How long the call is held whose heartbeats are counted. */
const BILL_SECONDS = Number(process.env.BENCH_BILL_SECONDS ?? 20);
/** Which parts run (BENCH_PARTS=time,throughput,bill,disk,tokens; default all). */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'time,throughput,bill,disk,tokens').split(','));
/** Also the per-turn rows on the dev server's default transfer rate (BENCH_DEV_DEFAULTS=1). */
const DEV_DEFAULTS = process.env.BENCH_DEV_DEFAULTS === '1';
/** Also the per-turn rows with eager activity dispatch off (BENCH_EAGER_OFF=1): what the shipped setting saves a turn. */
const EAGER_OFF = process.env.BENCH_EAGER_OFF === '1';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];

/** The per-turn table of one server setting: every row, its ms per turn and Actions per turn, and the ratios taken in each round. */
async function timeSection(server: string, dynamicConfig: Record<string, unknown>): Promise<string[]> {
  const ts = await startTurnStack(dynamicConfig);
  let r: Rounds;
  try {
    r = await interleaved(ts, VARIANTS, REPS, TURN_MODEL, TURNS, (round) => console.error(`  ${server}: round ${round + 1} of ${REPS} done`));
  } finally {
    await ts.close();
  }
  const out = [`### ${server}`, '', '| row | ms per turn (min / median / max) | Actions per turn | ÷ peer (unstreamed), per round | ÷ peer streamed, per round | ÷ floor, per round |', '|---|---|---|---|---|---|'];
  for (const v of VARIANTS) {
    const ms = stat(r[v].map((x) => x.msPerTurn));
    const actions = stat(r[v].map((x) => x.actionsPerTurn));
    const acts = actions.min === actions.max ? actions.median.toFixed(2) : fmt(actions, 2);
    const over = (b: Variant) => (v === b ? '—' : `${fmt(stat(ratios(r, v, b)), 2)}×`);
    out.push(`| ${VARIANT_NAMES[v]} | ${fmt(ms)} | ${acts} | ${over('peer')} | ${over('peerStreamed')} | ${over('floor')} |`);
  }
  out.push('');
  return out;
}

const benchStarted = performance.now();
const lines: string[] = [];
const say = (l: string) => {
  console.log(l);
  lines.push(l);
};
const commit = execSync('git rev-parse --short HEAD', { cwd: PROJECT_ROOT }).toString().trim();
const dirty = execSync('git status --porcelain --untracked-files=no', { cwd: PROJECT_ROOT }).toString().trim() !== '';
const load = loadavg();
say(`# Benchmark (commit ${commit}${dirty ? ', with uncommitted changes' : ''}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${REPS} repetitions, interleaved)`);
say('');
say(`Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average at the start ${load.map((x) => x.toFixed(2)).join(' / ')} (1 / 5 / 15 min); shared with other work, so compare rows within a round (the ratios), not across reports.`);
say('');
if (PARTS.has('time')) {
  const tm = timeModel();
  say(`Per-turn wall time of a ${TURNS}-turn \`${TURN_MODEL}\` run (each turn a model reply that says a sentence and calls list_files, then the call), ${REPS} rounds after a warm-up, every row once a round in rotating order on one stack, each run started once the dev server is idle (under a tenth of a core over 200 ms), so no row inherits the server work of the one before it. The scripted provider runs in a process of its own (./provider-process.ts), so its work is on no worker's event loop, ours or the peer's. Its one time model for every row, streamed or not: ${tm.firstTokenMs} ms to the first token + ${tm.msPerToken} ms per output token (PROVIDER_FIRST_TOKEN_MS, PROVIDER_MS_PER_TOKEN). Actions per turn: Temporal Cloud's rules, counted from each run's history (./actions.ts); the floor has no Temporal. Ratios are taken inside each round, then min / median / max.`);
  say('');
  say('Rows: ours streamed is the shipped worker (`AGENT_LIVE_STREAM=full`) with nobody reading, so the provider streams but no token is published (the workflow publishes each reply whole at no Action); one reader attached reads the run through `AgentRunHandle.events()` as `agent-harness follow` does, so tokens go out as signals (its first reply is sent before the reader\'s first poll arrives) and its polls are updates; unstreamed is `AGENT_LIVE_STREAM=events` (the provider asked with `stream: false`). The peer unstreamed is `generateText`, its default; streamed is `streamText` through `TemporalProvider({ languageModel: { streamingTopic } })`, whose streaming activity publishes every batch of parts on the workflow\'s stream whether anyone reads or not.');
  say('');
  for (const l of await timeSection('shipped settings (transferProcessorMaxPollRPS 1000)', {})) say(l);
  if (DEV_DEFAULTS) for (const l of await timeSection('dev-server defaults (20/s)', { 'history.transferProcessorMaxPollRPS': 20 })) say(l);
  if (EAGER_OFF) for (const l of await timeSection('shipped settings, eager dispatch off', { 'system.enableActivityEagerExecution': false })) say(l);
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
say('');
say(`Load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' / ')}; the whole bench took ${((performance.now() - benchStarted) / 60_000).toFixed(1)} min.`);
writeFileSync(`${PROJECT_ROOT}/reports/bench.md`, lines.join('\n') + '\n');
// Something of the parts (a stack's native runtime) keeps the event loop alive after the report is written.
process.exit(0);

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
  out.push('', 'A turn of `runaway` makes one read-only call, a turn of `runaway_wide` three. Ours reads ahead: the model call runs the reply\'s read-only calls right after the reply (activities/read-ahead.ts), so a turn is one activity and no marker, however many reads it makes (the one marker task is the run\'s configuration); the peer runs each tool call as an activity.');
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
    `${t.concurrent} concurrent \`plan\` runs (3 turns: list_files, read_file, the answer) per round, ${n} rounds each on one dev server, interleaved (ours, peer, ours, …); ours started as \`agent-harness run\` starts them. Server CPU: the dev server process's utime + stime (/proc) from before a round to when it is idle after it, per run. Client-side CPU: every other process (the bench's: client and our worker; the scripted provider's, a process of its own as a real provider is remote; and the peer's worker process). History: the first ${t.histories.ours.length / n} runs of each round. min / median / max over rounds.`,
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
