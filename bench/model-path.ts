// Per-call time of the model activity's one path (activities/ai-sdk-model.ts
// callLanguageModel: languageModelOf, doStream, the fold, the classification)
// with the built-in chat-completions provider (activities/chat-completions.ts)
// beside @ai-sdk/openai-compatible of both lines (2.x, provider spec V3; 3.x,
// V4), against the scripted provider over HTTP with no pause between stream
// events, so the figure is the provider code's own cost. The built-in provider
// is kept only while it measures faster than the package (issue 35).
// Two replies of the `plan` scenario per round (a tool call, then the text
// answer), the variants interleaved call by call so drift hits them alike.
// Figures: min / median / max ms per model call, and each variant's median
// over the built-in provider's within each round.
// `tsx bench/model-path.ts` (BENCH_ROUNDS, default 300); writes reports/model-path.md.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createOpenAICompatible as createOpenAICompatibleV4 } from '@ai-sdk/openai-compatible-v3';
import { startProvider } from '../dev/provider/server.js';
import { callLanguageModel, languageModelOf, type ModelProvider } from '../activities/ai-sdk-model.js';
import { createChatCompletions } from '../activities/chat-completions.js';
import { TOOLS, TURN0, TURN2 } from './model-prompts.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { commitOf, minMedianMax } from './report.js';
import type { ChatMessage } from '../common/contract.js';
import type { TokenStream } from '../node/token-sink.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const KEY = 'sk-bench';
/** A sink that keeps nothing: the stream is read as the activity reads it, text handed on. */
const DISCARD: TokenStream = { text: () => undefined, close: async () => undefined };

const provider = await startProvider({ apiKey: KEY, streamChunkDelayMs: 0 });
const VARIANTS = {
  'built-in chat-completions provider': createChatCompletions({ baseURL: provider.url, apiKey: KEY }),
  '@ai-sdk/openai-compatible 2.x (V3)': createOpenAICompatible({ baseURL: provider.url, name: 'scripted', apiKey: KEY, includeUsage: true }),
  '@ai-sdk/openai-compatible 3.x (V4)': createOpenAICompatibleV4({ baseURL: provider.url, name: 'scripted', apiKey: KEY, includeUsage: true }),
} satisfies Record<string, ModelProvider>;
type Variant = keyof typeof VARIANTS;
const NAMES = Object.keys(VARIANTS) as Variant[];
const REFERENCE: Variant = 'built-in chat-completions provider';

/** One model call through the activity's path (a fresh model per call, as each attempt takes one). */
async function once(p: ModelProvider, messages: ChatMessage[]): Promise<number> {
  const t0 = performance.now();
  const r = await callLanguageModel(languageModelOf(p, 'plan'), 'plan', { messages, tools: TOOLS, signal: new AbortController().signal, tokens: DISCARD });
  const ms = performance.now() - t0;
  if (!r.usage) throw new Error('a reply without usage: the scripted provider should report it');
  return ms;
}

// Warm-up: module loading, connection pools, the JIT.
for (let i = 0; i < 30; i++) for (const n of NAMES) await once(VARIANTS[n], i % 2 ? TURN2 : TURN0);
const loadBefore = loadavg()[0];
const ms: Record<Variant, number[]> = { 'built-in chat-completions provider': [], '@ai-sdk/openai-compatible 2.x (V3)': [], '@ai-sdk/openai-compatible 3.x (V4)': [] };
const ratios: Record<Variant, number[]> = { 'built-in chat-completions provider': [], '@ai-sdk/openai-compatible 2.x (V3)': [], '@ai-sdk/openai-compatible 3.x (V4)': [] };
for (let r = 0; r < ROUNDS; r++) {
  // The order rotates round by round: no variant always goes first.
  const order = NAMES.map((_, i) => NAMES[(i + r) % NAMES.length]);
  const round: Partial<Record<Variant, number>> = {};
  for (const n of order) {
    const t = (await once(VARIANTS[n], TURN0)) + (await once(VARIANTS[n], TURN2));
    round[n] = t / 2;
    ms[n].push(t / 2);
  }
  for (const n of NAMES) ratios[n].push((round[n] ?? NaN) / (round[REFERENCE] ?? NaN));
}
const loadAfter = loadavg()[0];
await provider.close();

const fmt = (xs: number[], digits: number) => minMedianMax(xs, digits);
const report = [
  '# The model path: the built-in provider beside @ai-sdk/openai-compatible',
  '',
  `Commit ${commitOf()}, ${new Date().toISOString()}. \`tsx bench/model-path.ts\`, ${ROUNDS} interleaved rounds; each round, per variant, the two model calls of the \`plan\` scenario (a tool call, then the text answer) through activities/ai-sdk-model.ts callLanguageModel, streamed, against the scripted provider with 0 ms between stream events; the figure is the mean of the two calls. Node ${process.version}; ${cpus().length} cores, shared; 1-minute load average ${loadBefore.toFixed(2)} before the rounds, ${loadAfter.toFixed(2)} after.`,
  '',
  '| variant | ms per model call (min / median / max) | ÷ built-in provider, within a round (min / median / max) |',
  '|---|---|---|',
  ...NAMES.map((n) => `| ${n} | ${fmt(ms[n], 2)} | ${fmt(ratios[n], 3)}× |`),
  '',
].join('\n');
writeFileSync(join(PROJECT_ROOT, 'reports', 'model-path.md'), report);
console.log(report);
