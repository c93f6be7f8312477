// The one bearer-token check of the codec server and the ops server
// (node/bearer-token.ts), against what an attacker puts in Authorization:
// the token with a character more or less, another scheme, the scheme alone,
// padding, control characters, non-ASCII, a header of a megabyte. Only the
// token itself (the scheme's case and surrounding spaces aside) passes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bearerCheck } from '../../node/bearer-token.js';

const TOKEN = 's3cret-Token_0123456789';
const check = bearerCheck(TOKEN);

describe('the bearer-token check', () => {
  it('takes the token under any case of the scheme, with spaces around it', () => {
    fc.assert(fc.property(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR'), fc.stringMatching(/^[ \t]{0,4}$/), fc.stringMatching(/^[ \t]{0,4}$/), (scheme, before, after) => {
      expect(check(`${scheme} ${before}${TOKEN}${after}`)).toBeNull();
    }));
  });

  it('calls any other bearer value wrong: a prefix, an extension, one character changed, unicode, control characters', () => {
    const near = fc.oneof(
      fc.integer({ min: 0, max: TOKEN.length - 1 }).map((n) => TOKEN.slice(0, n)),
      fc.string({ minLength: 1 }).map((s) => TOKEN + s),
      fc.tuple(fc.integer({ min: 0, max: TOKEN.length - 1 }), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' })).map(([i, c]) => TOKEN.slice(0, i) + c + TOKEN.slice(i + 1)),
      fc.string({ unit: 'binary' }),
    );
    fc.assert(fc.property(near, (given) => {
      fc.pre(given.trim() !== TOKEN);
      expect(check(`Bearer ${given}`)).toBe('wrong');
    }), { numRuns: 500 });
  });

  it('calls a header without a bearer value missing: absent, empty, another scheme, the scheme without its space', () => {
    const other = fc.oneof(
      fc.constant(undefined),
      fc.constantFrom('', 'Bearer', `Bearer${TOKEN}`, `Basic ${TOKEN}`, `Token ${TOKEN}`, ` Bearer ${TOKEN}`, TOKEN),
      fc.string().filter((s) => !/^Bearer /i.test(s)),
    );
    fc.assert(fc.property(other, (header) => {
      expect(check(header)).toBe('missing');
    }), { numRuns: 500 });
  });

  it('answers a header of a megabyte as wrong, at once', () => {
    expect(check(`Bearer ${TOKEN}${'x'.repeat(1 << 20)}`)).toBe('wrong');
    expect(check(`Bearer ${'\u0000'.repeat(1 << 20)}`)).toBe('wrong');
  });
});
