// Per-turn time of the model activity's backends on the same stack, beside
// the floor and the peer as `npm run bench` (./compare.ts) measures them: the
// built-in OpenAI-compatible client (one unstreamed fetch, and streamed as it
// is once the worker has a token sink) against the AI SDK path (doStream
// through @ai-sdk/openai-compatible on chat completions and @ai-sdk/anthropic
// on Messages); the floor (./floor.ts: the same agent as a plain in-process
// loop) and the peer (./peer-process.ts: @temporalio/ai-sdk running the same
// agent as a workflow). One in-memory dev server (the shipped dynamic
// config), one scripted provider with no pause between stream events (so the
// figure is the path's own cost, not the provider's pacing), one worker per
// backend on a queue of its own (./stack.ts); a 20-turn `runaway` run (a model
// call and a list_files call per turn) on each variant in turn, round after
// round, so drift hits them alike. Figures: min / median / max of the
// per-turn wall time over the rounds, and each variant over the built-in
// client, the floor and the peer within each round.
// `tsx bench/provider-path.ts` (BENCH_ROUNDS, default 10); writes reports/provider-path.md.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { Worker } from '@temporalio/worker';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { PROJECT_ROOT } from '../node/project-root.js';
import { commitOf, minMedianMax } from './report.js';
import { runFloor } from './floor.js';
import { runPeer, startPeer } from './peer-process.js';
import { startBenchStack, type BenchWorkerOptions } from './stack.js';
import type { ModelProvider } from '../activities/ai-sdk-model.js';
import type { TokenSink } from '../node/token-sink.js';
import type { AgentInput, RunResult } from '../common/contract.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const TURNS = 20;
const KEY = 'sk-bench';
type Backend = 'built-in client' | 'built-in client, streamed' | 'AI SDK openai-compatible' | 'AI SDK anthropic';
const BACKENDS: Backend[] = ['built-in client', 'built-in client, streamed', 'AI SDK openai-compatible', 'AI SDK anthropic'];
const FLOOR = 'floor: in-process loop';
const PEER = 'peer: @temporalio/ai-sdk';
type Variant = typeof FLOOR | Backend | typeof PEER;
const VARIANTS: Variant[] = [FLOOR, ...BACKENDS, PEER];
/** What each variant is divided by, within a round. */
const REFERENCES = ['built-in client', FLOOR, PEER] as const satisfies readonly Variant[];
/** A sink that keeps nothing: what makes the built-in client stream (the live stream's cost is not measured here). */
const DISCARD: TokenSink = { open: () => ({ text: () => undefined, close: async () => undefined }) };

// The harness's default tools (the built-ins, as the floor offers), not the bench's long_call beside them.
const stack = await startBenchStack({ toolset: null, provider: { apiKey: KEY, streamChunkDelayMs: 0 }, worker: { stream: 'events' } });
const providers: Record<Backend, ModelProvider | null> = {
  'built-in client': null,
  'built-in client, streamed': null,
  'AI SDK openai-compatible': createOpenAICompatible({ baseURL: stack.providerUrl, name: 'scripted', apiKey: KEY, includeUsage: true }),
  'AI SDK anthropic': createAnthropic({ baseURL: stack.providerUrl, apiKey: KEY }),
};
// The stack's own worker is the built-in client's (its live stream carries events only, so the client does not stream).
const queueOf = (b: Backend) => (b === 'built-in client' ? stack.taskQueue : `bench-${BACKENDS.indexOf(b)}`);
const workers: Worker[] = [stack.worker];
for (const b of BACKENDS.slice(1)) {
  const p = providers[b];
  // Every streamed backend gets a sink, so each pays what streaming costs the activity.
  const extra: BenchWorkerOptions = { tokens: DISCARD, ...(p ? { model: { provider: p } } : {}) };
  workers.push(await stack.addWorker(queueOf(b), extra));
}
const peer = await startPeer(stack);
const running = workers.map((w) => w.run());

let seq = 0;
async function perTurnMs(v: Variant): Promise<number> {
  const t0 = performance.now();
  let turns: number;
  if (v === FLOOR) turns = (await runFloor(stack.providerUrl, 'runaway', TURNS, KEY)).turns;
  else if (v === PEER) turns = await runPeer(stack.client, `path-peer-${++seq}`, 'runaway', TURNS);
  else {
    const input: AgentInput = { task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: TURNS, maxBudgetUsd: null } };
    const r = (await stack.client.workflow.execute('agentRun', { taskQueue: queueOf(v), workflowId: `path-${++seq}`, args: [input] })) as RunResult;
    if (r.turns !== TURNS) throw new Error(`${v}: ${r.turns} turns (${r.status}: ${JSON.stringify(r.error)}), expected ${TURNS}`);
    turns = r.turns;
  }
  const ms = performance.now() - t0;
  if (turns !== TURNS) throw new Error(`${v} took ${turns} turns, expected ${TURNS}`);
  return ms / TURNS;
}

const perTurn = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
/** ratio[reference][variant]: the variant's per-turn time over the reference's, one per round. */
const ratio = Object.fromEntries(REFERENCES.map((r) => [r, Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]]))])) as Record<(typeof REFERENCES)[number], Record<Variant, number[]>>;
const loadBefore = loadavg()[0];
try {
  // One warm-up run each: bundles loaded, connections open, JIT warm.
  for (const v of VARIANTS) await perTurnMs(v);
  for (let round = 0; round < ROUNDS; round++) {
    // The order turns each round, so no variant always runs first.
    const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]);
    const got = {} as Record<Variant, number>;
    for (const v of order) got[v] = await perTurnMs(v);
    for (const v of VARIANTS) {
      perTurn[v].push(got[v]);
      for (const r of REFERENCES) ratio[r][v].push(got[v] / got[r]);
    }
  }
} finally {
  for (const w of workers) w.shutdown();
  peer.kill('SIGTERM');
  await Promise.all(running);
  await stack.close();
}
const loadAfter = loadavg()[0];

const commit = commitOf();
const cell = (r: (typeof REFERENCES)[number], v: Variant) => (v === r ? '1' : `${minMedianMax(ratio[r][v], 3)}×`);
const lines = [
  `# Model activity backends: per-turn time, beside the floor and the peer`,
  '',
  `Commit ${commit}, ${new Date().toISOString()}. \`tsx bench/provider-path.ts\`, ${ROUNDS} interleaved rounds of a ${TURNS}-turn \`runaway\` run per variant (a model call and a list_files call per turn), in-memory dev server, scripted provider with 0 ms between stream events.`,
  '',
  `Floor: the same agent as a plain in-process loop (bench/floor.ts); peer: @temporalio/ai-sdk running the same agent as a workflow on the same server, in its own worker process (bench/peer-process.ts). Ratios are taken within each round, then min / median / max over the rounds. Machine: ${cpus().length} cores, shared; 1-minute load average ${loadBefore.toFixed(2)} before the rounds, ${loadAfter.toFixed(2)} after.`,
  '',
  '| variant | per-turn ms (min / median / max) | ÷ built-in client | ÷ floor | ÷ peer |',
  '|---|---|---|---|---|',
  ...VARIANTS.map((v) => `| ${v} | ${minMedianMax(perTurn[v], 2)} | ${REFERENCES.map((r) => cell(r, v)).join(' | ')} |`),
  '',
];
writeFileSync(join(PROJECT_ROOT, 'reports', 'provider-path.md'), lines.join('\n'));
console.log(lines.join('\n'));
