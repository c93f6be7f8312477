// `npm run bench:gate`: the per-turn regression gate CI runs after the test
// suite. A short interleaved comparison on one stack, ours as shipped
// (AGENT_LIVE_STREAM=full, nobody reading) against the peer as it ships
// (@temporalio/ai-sdk, unstreamed), ROUNDS rounds of a TURNS-turn `narrated`
// run each (every reply says a sentence beside its call, so a streamed reply
// carries text), the order alternating. Exits 1 when ours per turn (the
// median over rounds) exceeds the peer's; prints every figure either way.
// GATE_ROUNDS and GATE_TURNS resize it; the provider's time model is
// PROVIDER_FIRST_TOKEN_MS / PROVIDER_MS_PER_TOKEN (default 0: the harness's own cost).
import { loadavg } from 'node:os';
import { commitOf } from './report.js';
import { fmt, interleaved, ratios, startTurnStack, stat, timeModel, VARIANT_NAMES } from './turns.js';

const count = (name: string, otherwise: number): number => {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? otherwise : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of 1 or more, got ${JSON.stringify(raw)}`);
  return n;
};
// 9: a median over 5 rounds moved by one slow round on a loaded machine (0.83–0.93× seen, single rounds above 1×).
const ROUNDS = count('GATE_ROUNDS', 9);
const TURNS = count('GATE_TURNS', 5);
const MODEL = 'narrated';

const started = performance.now();
const load = loadavg().map((x) => x.toFixed(2)).join(' ');
const tm = timeModel();
console.log(`bench:gate at ${commitOf()}: ${ROUNDS} rounds of a ${TURNS}-turn \`${MODEL}\` run, ours vs the peer interleaved; provider ${tm.firstTokenMs} ms to first token + ${tm.msPerToken} ms/token; load average ${load}`);
const ts = await startTurnStack();
let failed = false;
try {
  const r = await interleaved(ts, ['oursStreamed', 'peer'], ROUNDS, MODEL, TURNS, (round, row) =>
    console.log(`  round ${round + 1}: ours ${row.oursStreamed!.msPerTurn.toFixed(1)} ms/turn, peer ${row.peer!.msPerTurn.toFixed(1)} ms/turn`),
  );
  const ours = stat(r.oursStreamed.map((x) => x.msPerTurn));
  const peer = stat(r.peer.map((x) => x.msPerTurn));
  const ratio = stat(ratios(r, 'oursStreamed', 'peer'));
  console.log(`${VARIANT_NAMES.oursStreamed}: ${fmt(ours)} ms/turn (min / median / max), ${stat(r.oursStreamed.map((x) => x.actionsPerTurn)).median.toFixed(2)} Actions/turn`);
  console.log(`${VARIANT_NAMES.peer}: ${fmt(peer)} ms/turn, ${stat(r.peer.map((x) => x.actionsPerTurn)).median.toFixed(2)} Actions/turn`);
  console.log(`ours ÷ peer within each round: ${fmt(ratio, 2)}×; medians: ${(ours.median / peer.median).toFixed(2)}×`);
  failed = ours.median > peer.median;
  console.log(failed ? `FAIL: ours per turn (median ${ours.median.toFixed(1)} ms) exceeds the peer's (${peer.median.toFixed(1)} ms)` : `ok: ours per turn (median ${ours.median.toFixed(1)} ms) ≤ the peer's (${peer.median.toFixed(1)} ms)`);
} finally {
  await ts.close();
}
console.log(`bench:gate took ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(failed ? 1 : 0);
