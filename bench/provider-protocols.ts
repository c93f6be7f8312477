// What one request to the scripted provider takes, per protocol, unstreamed
// and streamed, called through the real provider packages as the model
// activity will call them (@ai-sdk/openai-compatible, @ai-sdk/anthropic) and
// through plain fetch on chat completions (today's client) as the floor.
// Two replies of the `plan` scenario: a tool call (turn 0) and the text
// answer (turn 2, ~10 words: the longest stream). Streams are timed with no
// pause between events (the provider's own cost) and with the default 5 ms
// (what the tests see). The cases are interleaved round by round so drift
// hits them alike; figures are p50 / p95 / mean ms over ROUNDS requests.
// `tsx bench/provider-protocols.ts` (BENCH_ROUNDS, default 200); writes reports/provider-protocols.md.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { startProvider, type RunningProvider } from '../dev/provider/server.js';
import { toFunctionTools, toPrompt } from '../activities/ai-sdk-prompt.js';
import { TOOLS, TURN0, TURN2 } from './model-prompts.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import type { ChatMessage } from '../common/contract.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);

type Client = 'fetch (chat)' | 'openai-compatible' | 'anthropic';
interface Case {
  client: Client;
  stream: boolean;
  turn: 'tool call' | 'answer';
  chunkMs: number;
  run(): Promise<void>;
  ms: number[];
}

function modelOf(client: Exclude<Client, 'fetch (chat)'>, p: RunningProvider): LanguageModelV3 {
  return client === 'anthropic' ? createAnthropic({ baseURL: p.url, apiKey: 'k' })('plan') : createOpenAICompatible({ baseURL: p.url, name: 'scripted', includeUsage: true }).chatModel('plan');
}

async function viaPackage(m: LanguageModelV3, options: LanguageModelV3CallOptions, stream: boolean): Promise<void> {
  if (!stream) {
    await m.doGenerate(options);
    return;
  }
  const reader = (await m.doStream(options)).stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    if (value.type === 'error') throw new Error(String(value.error));
  }
}

async function viaFetch(p: RunningProvider, messages: ChatMessage[], stream: boolean): Promise<void> {
  const res = await fetch(`${p.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'plan', messages, tools: TOOLS, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
  });
  if (!res.ok) throw new Error(`status ${res.status}`);
  await res.text();
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function main(): Promise<void> {
  const providers = new Map<number, RunningProvider>();
  for (const chunkMs of [0, 5]) providers.set(chunkMs, await startProvider({ streamChunkDelayMs: chunkMs }));
  const cases: Case[] = [];
  for (const [turn, transcript] of [['tool call', TURN0], ['answer', TURN2]] as const) {
    const options: LanguageModelV3CallOptions = { prompt: toPrompt(transcript), tools: toFunctionTools(TOOLS), maxOutputTokens: 1000 };
    for (const stream of [false, true]) {
      for (const chunkMs of stream ? [0, 5] : [0]) {
        const p = providers.get(chunkMs);
        if (!p) throw new Error('no provider');
        cases.push({ client: 'fetch (chat)', stream, turn, chunkMs, ms: [], run: () => viaFetch(p, transcript, stream) });
        for (const client of ['openai-compatible', 'anthropic'] as const) {
          const m = modelOf(client, p);
          cases.push({ client, stream, turn, chunkMs, ms: [], run: () => viaPackage(m, options, stream) });
        }
      }
    }
  }
  // Warm-up: module loading, the encoder's first use, connection pools.
  for (const c of cases) for (let i = 0; i < 10; i++) await c.run();
  for (let r = 0; r < ROUNDS; r++) {
    for (const c of cases) {
      const t0 = performance.now();
      await c.run();
      c.ms.push(performance.now() - t0);
    }
  }
  const rows = cases.map(
    (c) => `| ${c.turn} | ${c.client} | ${c.stream ? `streamed, ${c.chunkMs} ms between events` : 'unstreamed'} | ${quantile(c.ms, 0.5).toFixed(2)} | ${quantile(c.ms, 0.95).toFixed(2)} | ${mean(c.ms).toFixed(2)} |`,
  );
  const report = [
    '# Scripted provider: per-request time by protocol',
    '',
    `\`tsx bench/provider-protocols.ts\`, ${ROUNDS} requests per case, interleaved; Node ${process.version}. ms from the call to the last byte (streams read to their end).`,
    '',
    '| reply | client | mode | p50 ms | p95 ms | mean ms |',
    '|---|---|---|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
  writeFileSync(join(PROJECT_ROOT, 'reports', 'provider-protocols.md'), report);
  console.log(report);
  for (const p of providers.values()) await p.close();
}

await main();
