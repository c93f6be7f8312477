// Token counts (node/tokens.ts over node/byte-pair.ts): the same tokens
// as js-tiktoken's o200k_base encoder on any text it can finish, and on the
// texts it cannot (one long unbroken piece, where its merge is quadratic) an
// answer in well under a second that the sync and async paths agree on,
// counted without holding the event loop.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k_base from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { BytePairEncoder, runSync } from '../../node/byte-pair.js';
import { countCompletionTokens, countCompletionTokensAsync, countPromptTokens, countPromptTokensAsync, countTokens, countTokensAsync, truncateToTokens, truncateToTokensAsync } from '../../node/tokens.js';
import { propertyParams } from '../helpers/property.js';

const reference = new Tiktoken(o200k_base);
const ours = new BytePairEncoder(o200k_base);
const encode = (text: string) => runSync(ours.encodeSteps(text));

// Text as agents see it: words, punctuation, whitespace and newlines, numbers,
// contractions, accents, CJK, emoji (with ZWJ and skin tones), code and JSON,
// and arbitrary code units (lone surrogates included: both sides write U+FFFD).
const WORDS = ['the', 'The', 'THE', "it's", "DON'T", "we'll", 'naïve', 'Ünïcödé', 'straße', 'hello', 'world', 'x', 'xxxxxxxx', '__init__', 'camelCase', 'snake_case', 'http://example.com/a?b=c', '1234567', '3.14159', '中文', '日本語のテキスト', '한국어', 'Здравствуйте', 'مرحبا', 'שלום', '😀', '👩‍💻', '👍🏽', '🇫🇷', '{"a":1}', '[]', '=>', '...', '—', '\t', '\r\n', '\n\n', '   ', ' '];
const normalText = fc.oneof(
  fc.array(fc.constantFrom(...WORDS), { maxLength: 60 }).chain((ws) => fc.array(fc.constantFrom(' ', '', '\n', ', ', '. '), { minLength: ws.length, maxLength: ws.length }).map((seps) => ws.map((w, i) => w + seps[i]).join(''))),
  fc.string({ unit: 'grapheme-ascii', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 150 }),
  fc.string({ unit: 'grapheme-composite', maxLength: 100 }),
  fc.string({ unit: 'binary', maxLength: 150 }),
);
// Runs long enough that the merge order matters (many equal-rank pairs, ties
// to the leftmost), short enough for js-tiktoken to finish in a test.
const RUN_UNITS = ['x', 'X', 'a', 'ab', '_', '-', '=', '.', '0', '7', ' ', '\n', '中', '的', '한', 'é', '😀', '👍🏽', 'xX', '中a'];
const runText = fc.tuple(fc.constantFrom(...RUN_UNITS), fc.integer({ min: 1, max: 300 }), fc.string({ unit: 'grapheme', maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 8 })).map(([u, n, a, b]) => a + u.repeat(n) + b);

describe('o200k_base byte-pair encoding', () => {
  it('property: the same tokens as js-tiktoken on normal text', () => {
    fc.assert(
      fc.property(normalText, (text) => {
        fc.pre(!/<\|endof(text|prompt)\|>/.test(text));
        const want = reference.encode(text);
        expect(encode(text)).toEqual(want);
        expect(countTokens(text)).toBe(want.length);
      }),
      propertyParams(400),
    );
  });

  it('property: the same tokens as js-tiktoken on runs of one unit (ties broken leftmost)', () => {
    fc.assert(
      fc.property(runText, (text) => {
        expect(encode(text)).toEqual(reference.encode(text));
      }),
      propertyParams(200),
    );
  });

  it('property: truncation is js-tiktoken\'s first max tokens, decoded', () => {
    fc.assert(
      fc.property(fc.oneof(normalText, runText), fc.integer({ min: 0, max: 40 }), (text, max) => {
        fc.pre(!/<\|endof(text|prompt)\|>/.test(text));
        const tokens = reference.encode(text);
        const want = tokens.length <= max ? text : reference.decode(tokens.slice(0, max));
        expect(truncateToTokens(text, max)).toBe(want);
      }),
      propertyParams(200),
    );
  });

  it('refuses a special token in the text, as js-tiktoken\'s encode(text) does', () => {
    expect(() => reference.encode('a <|endoftext|> b')).toThrow(/special token/);
    expect(() => countTokens('a <|endoftext|> b')).toThrow(/special token/);
    expect(() => countTokens('<|endofprompt|>')).toThrow(/special token/);
  });

  it('counts the known small cases', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countPromptTokens([{ role: 'user', content: 'hello world' }], undefined)).toBe(3 + 3 + countTokens('user') + 2);
  });
});

// 60,000 of one thing: js-tiktoken would take minutes on most of these.
const PATHOLOGICAL: Record<string, string> = {
  'one letter': 'x'.repeat(60_000),
  'one capital': 'X'.repeat(60_000),
  underscores: '_'.repeat(60_000),
  'CJK run': '的一是不了人我在有他这为之大来以个中上们'.repeat(3_000),
  'emoji run': '😀'.repeat(60_000),
  'digit run': '7'.repeat(60_000),
  'spaces, then a word': ' '.repeat(60_000) + 'x',
  'newlines and tabs': '\n\t'.repeat(30_000),
  'base64-like': Buffer.from('x'.repeat(45_000)).toString('base64'),
  'prose with long runs': ('Some prose, then a long run: ' + 'a'.repeat(20_000) + ' and more prose. ').repeat(3) + '_'.repeat(20_000) + ' 中'.repeat(100) + '中'.repeat(10_000),
};

describe('pathological inputs', () => {
  for (const [name, text] of Object.entries(PATHOLOGICAL)) {
    it(`${name}: finishes, sync and async agree, decodes back to the text`, async () => {
      const t0 = performance.now();
      const tokens = encode(text);
      const ms = performance.now() - t0;
      // js-tiktoken: minutes; a generous bound for a loaded 2-core machine.
      expect(ms).toBeLessThan(5_000);
      expect(tokens.length).toBeGreaterThan(0);
      expect(ours.decode(tokens)).toBe(text);
      expect(countTokens(text)).toBe(tokens.length);
      expect(await countTokensAsync(text)).toBe(tokens.length);
      const messages = [{ role: 'tool', content: text, tool_call_id: 'call_1' }];
      expect(await countPromptTokensAsync(messages, [{ type: 'function' }])).toBe(countPromptTokens(messages, [{ type: 'function' }]));
      expect(await countCompletionTokensAsync(text, [{ id: text.slice(0, 100) }])).toBe(countCompletionTokens(text, [{ id: text.slice(0, 100) }]));
      for (const max of [1, 100, tokens.length - 1]) {
        const cut = truncateToTokens(text, max);
        expect(await truncateToTokensAsync(text, max)).toBe(cut);
        expect(cut).toBe(ours.decode(tokens.slice(0, max)));
      }
      expect(truncateToTokens(text, tokens.length)).toBe(text);
    });
  }
});

describe('the event loop', () => {
  const texts = ['x'.repeat(1 << 20), '中'.repeat((1 << 20) / 3)];

  // The promise, load-independent: the encoder hands control back at least
  // once per 4096 units of work (node/byte-pair.ts STEP_WORK), however long
  // the one unbroken piece, so the async driver can look at its clock often.
  it('yields at least once per 4 KiB of input while one unbroken MiB of one letter or of CJK is encoded', () => {
    for (const t of texts) {
      const bytes = Buffer.byteLength(t);
      const steps = ours.encodeSteps(t);
      let yields = 0;
      for (let r = steps.next(); !r.done; r = steps.next()) yields += 1;
      expect(yields).toBeGreaterThanOrEqual(Math.floor(bytes / 4096));
    }
  });

  // And end to end: timers keep firing while the async count runs. On an idle
  // core the longest gap is ~10 ms (one slice); the bound is 1 s because on a
  // loaded 2-core machine a gap also holds time spent waiting for a core,
  // which no slicing can remove. It still catches the failure it guards
  // against: a quadratic merge held the loop for ~12 s on 8,000 letters.
  it('keeps timers firing (no gap of a second) while 1 MB of one letter and 1 MB of CJK are counted async', async () => {
    const syncCounts = texts.map(countTokens);
    const histogram = monitorEventLoopDelay({ resolution: 5 });
    // A probe of our own beside the histogram: the longest gap between 5 ms ticks.
    let last = performance.now();
    let longestGap = 0;
    const probe = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    histogram.enable();
    try {
      last = performance.now();
      for (const [i, t] of texts.entries()) expect(await countTokensAsync(t)).toBe(syncCounts[i]);
    } finally {
      histogram.disable();
      clearInterval(probe);
    }
    expect(histogram.max / 1e6).toBeLessThan(1000);
    expect(longestGap).toBeLessThan(1000);
  });
});
