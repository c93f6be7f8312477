// Per-turn time of the model activity's two backends on the same stack: the
// built-in OpenAI-compatible client (one unstreamed fetch, and streamed as it
// is once the worker has a token sink) against the AI SDK path (doStream
// through @ai-sdk/openai-compatible on chat completions and @ai-sdk/anthropic
// on Messages). One in-memory dev server (the shipped
// dynamic config), one scripted provider with no pause between stream events
// (so the figure is the path's own cost, not the provider's pacing), one
// worker per backend on a queue of its own; a 20-turn `runaway` run (a model
// call and a list_files call per turn) on each backend in turn, round after
// round, so drift hits them alike. Figures: min / median / max of the
// per-turn wall time over the rounds, and the AI SDK paths over the built-in
// one within each round.
// `tsx bench/provider-path.ts` (BENCH_ROUNDS, default 10); writes reports/provider-path.md.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AGENT_LOOP_DYNAMIC_CONFIG, findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { startProvider } from '../dev/provider/server.js';
import { createAgentWorker } from '../worker/create-worker.js';
import { dataConverter } from '../common/payload-codec.js';
import { PROJECT_ROOT } from '../common/project-root.js';
import { commitOf, minMedianMax } from './report.js';
import type { ModelProvider } from '../activities/ai-sdk-model.js';
import type { TokenSink } from '../common/token-sink.js';
import type { AgentInput, RunResult } from '../common/contract.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const TURNS = 20;
const KEY = 'sk-bench';
type Backend = 'built-in client' | 'built-in client, streamed' | 'AI SDK openai-compatible' | 'AI SDK anthropic';
const BACKENDS: Backend[] = ['built-in client', 'built-in client, streamed', 'AI SDK openai-compatible', 'AI SDK anthropic'];
/** A sink that keeps nothing: what makes the built-in client stream (the live stream's cost is not measured here). */
const DISCARD: TokenSink = { open: () => ({ text: () => undefined, close: async () => undefined }) };

Runtime.install({ logger: new DefaultLogger('ERROR') });
const dir = mkdtempSync(join(tmpdir(), 'agent-bench-path-'));
const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig: AGENT_LOOP_DYNAMIC_CONFIG });
const provider = await startProvider({ apiKey: KEY, streamChunkDelayMs: 0 });
const providers: Record<Backend, ModelProvider | null> = {
  'built-in client': null,
  'built-in client, streamed': null,
  'AI SDK openai-compatible': createOpenAICompatible({ baseURL: provider.url, name: 'scripted', apiKey: KEY, includeUsage: true }),
  'AI SDK anthropic': createAnthropic({ baseURL: provider.url, apiKey: KEY }),
};
const nc = await NativeConnection.connect({ address: server.address });
const workers: Worker[] = [];
const queueOf = (b: Backend) => `bench-${BACKENDS.indexOf(b)}`;
for (const b of BACKENDS) {
  const p = providers[b];
  workers.push(
    await createAgentWorker({
      connection: nc,
      taskQueue: queueOf(b),
      llmBaseUrl: provider.url,
      llmApiKey: KEY,
      ...(p ? { modelProvider: p } : {}),
      // Every streamed backend gets a sink, so each pays what streaming costs the activity.
      ...(b === 'built-in client' ? { stream: 'events' as const } : { tokens: DISCARD }),
      workspaceRoot: join(dir, 'ws'),
      traceDir: join(dir, 'traces'),
    }),
  );
}
const running = workers.map((w) => w.run());
const client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: dataConverter() });

let seq = 0;
async function perTurnMs(b: Backend): Promise<number> {
  const input: AgentInput = { task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: TURNS, maxBudgetUsd: null } };
  const t0 = performance.now();
  const r = (await client.workflow.execute('agentRun', { taskQueue: queueOf(b), workflowId: `path-${++seq}`, args: [input] })) as RunResult;
  const ms = performance.now() - t0;
  if (r.turns !== TURNS) throw new Error(`${b}: ${r.turns} turns (${r.status}: ${JSON.stringify(r.error)}), expected ${TURNS}`);
  return ms / TURNS;
}

const perTurn = Object.fromEntries(BACKENDS.map((b) => [b, [] as number[]])) as Record<Backend, number[]>;
const ratio = Object.fromEntries(BACKENDS.map((b) => [b, [] as number[]])) as Record<Backend, number[]>;
try {
  // One warm-up run each: bundles loaded, connections open, JIT warm.
  for (const b of BACKENDS) await perTurnMs(b);
  for (let round = 0; round < ROUNDS; round++) {
    // The order turns each round, so no backend always runs first.
    const order = BACKENDS.map((_, i) => BACKENDS[(i + round) % BACKENDS.length]);
    const got = {} as Record<Backend, number>;
    for (const b of order) got[b] = await perTurnMs(b);
    for (const b of BACKENDS) {
      perTurn[b].push(got[b]);
      ratio[b].push(got[b] / got['built-in client']);
    }
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
const lines = [
  `# Model activity backends: per-turn time`,
  '',
  `Commit ${commit}, ${new Date().toISOString()}. \`tsx bench/provider-path.ts\`, ${ROUNDS} interleaved rounds of a ${TURNS}-turn \`runaway\` run per backend (a model call and a list_files call per turn), in-memory dev server, scripted provider with 0 ms between stream events.`,
  '',
  '| backend | per-turn ms (min / median / max) | over the built-in client, same round (min / median / max) |',
  '|---|---|---|',
  ...BACKENDS.map((b) => `| ${b} | ${minMedianMax(perTurn[b], 2)} | ${b === 'built-in client' ? '1' : minMedianMax(ratio[b], 3)} |`),
  '',
];
writeFileSync(join(PROJECT_ROOT, 'reports', 'provider-path.md'), lines.join('\n'));
console.log(lines.join('\n'));
