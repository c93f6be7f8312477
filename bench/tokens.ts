// What counting tokens costs the worker's event loop: ms per 100 KB for
// prose and for the texts that are one long pre-tokenized piece (one letter,
// underscores, CJK, emoji), js-tiktoken's encoder ("before") beside
// node/tokens.ts ("after"), and the longest stall of the event loop while
// 1 MB of each is counted with the async API. js-tiktoken's merge is
// quadratic in a piece, so on those it is timed only at 1, 2 and 4 KB and
// taken to 100 KB as a square from 4 KB (its time grows ×4 per doubling up
// to 4 KB; further up it has been seen to grow faster, so this is no overstatement).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k_base from 'js-tiktoken/ranks/o200k_base';
import { countTokens, countTokensAsync } from '../node/tokens.js';

const KB = 1024;

export interface TokenCase {
  name: string;
  /** js-tiktoken, ms per 100 KB: measured on prose, extrapolated on the runs. */
  beforeMsPer100KB: number;
  beforeExtrapolated: boolean;
  /** js-tiktoken's ms at 1, 2, 4 KB (runs only): the growth the extrapolation rests on. */
  beforeSmall?: [number, number, number];
  afterMsPer100KB: number;
  /** The same text at 1 MB: ms (sync), and the event loop's longest stall counting it async. */
  afterMsPerMB: number;
  asyncMsPerMB: number;
  asyncMaxStallMs: number;
}

/** Prose as a tool result carries it: sentences of common words, punctuation, numbers, newlines. */
function prose(bytes: number): string {
  const words = 'the of and to in is that it for was on are as with his they at be this from have or by one had not but what all were when we there can an your which their said if do will each about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know'.split(' ');
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let s = '';
  while (s.length < bytes) {
    const n = 6 + Math.floor(rand() * 14);
    const sentence = Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(' ');
    s += sentence[0].toUpperCase() + sentence.slice(1) + (rand() < 0.1 ? `, ${Math.floor(rand() * 10000)} times` : '') + (rand() < 0.15 ? '.\n\n' : '. ');
  }
  return s.slice(0, bytes);
}

/** `bytes` of UTF-8 made of one unit repeated: one pre-tokenized piece. */
const run = (unit: string) => (bytes: number) => unit.repeat(Math.floor(bytes / Buffer.byteLength(unit)));

const CASES: { name: string; make: (bytes: number) => string; pathological: boolean }[] = [
  { name: 'prose', make: prose, pathological: false },
  { name: 'one letter (`x`)', make: run('x'), pathological: true },
  { name: 'underscores', make: run('_'), pathological: true },
  { name: 'CJK (`的`)', make: run('的'), pathological: true },
  { name: 'emoji (`😀`)', make: run('😀'), pathological: true },
];

const reference = new Tiktoken(o200k_base);

/** Median ms of `reps` calls. */
function timeMs(f: () => void, reps: number): number {
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    f();
    xs.push(performance.now() - t0);
  }
  return xs.sort((a, b) => a - b)[Math.floor(reps / 2)];
}

async function asyncStall(text: string): Promise<{ ms: number; maxStallMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = performance.now();
  await countTokensAsync(text);
  const ms = performance.now() - t0;
  h.disable();
  return { ms, maxStallMs: h.max / 1e6 };
}

export async function measureTokens(): Promise<TokenCase[]> {
  countTokens(prose(10 * KB)); // warm-up: both encoders' first calls
  reference.encode(prose(10 * KB));
  const out: TokenCase[] = [];
  for (const c of CASES) {
    const text100 = c.make(100 * KB);
    const textMB = c.make(KB * KB);
    if (countTokens(text100) !== (c.pathological ? countTokens(text100) : reference.encode(text100).length)) throw new Error(`${c.name}: counts differ from js-tiktoken`);
    let before: number;
    let beforeSmall: [number, number, number] | undefined;
    if (c.pathological) {
      const [a, b, d] = [1, 2, 4].map((k) => {
        const t = c.make(k * KB);
        if (reference.encode(t).length !== countTokens(t)) throw new Error(`${c.name} at ${k} KB: counts differ from js-tiktoken`);
        return timeMs(() => reference.encode(t), 3);
      });
      beforeSmall = [a, b, d];
      before = d * (100 / 4) ** 2;
    } else {
      before = timeMs(() => reference.encode(text100), 5);
    }
    const after = timeMs(() => countTokens(text100), 5);
    const afterMB = timeMs(() => countTokens(textMB), 3);
    const stall = await asyncStall(textMB);
    out.push({ name: c.name, beforeMsPer100KB: before, beforeExtrapolated: c.pathological, beforeSmall, afterMsPer100KB: after, afterMsPerMB: afterMB, asyncMsPerMB: stall.ms, asyncMaxStallMs: stall.maxStallMs });
  }
  return out;
}
