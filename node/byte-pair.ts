// A tiktoken-compatible byte-pair encoder whose merge is O(n log n) in the
// length of one pre-tokenized piece, and which can stop every few thousand
// steps so a caller can give the event loop back.
//
// Why not js-tiktoken's encoder: its merge rescans every adjacent pair after
// each merge (and joins byte slices into string keys as it goes), so it is
// quadratic in a piece's length. A tool result of 8,000 `x` (one piece) takes
// ~12 s there and blocks the worker's event loop for all of it.
//
// What is the same as js-tiktoken: the ranks (parsed from the same
// TiktokenBPE data), the pre-tokenizer regex (the data's pat_str with flags
// "ug"), the special-token rule of its default `encode(text)` (any special
// token in the text is an error), the shortcut that a whole piece that is a
// token is that token, and the merge order: always the adjacent pair of the
// lowest rank, the leftmost of equal ranks. Only the bookkeeping differs: the
// parts are a linked list over byte offsets and the candidate pairs sit in a
// min-heap keyed by (rank, offset); a merge changes only its two neighbouring
// pairs, which are pushed anew, and entries made stale by a merge are skipped
// when they come out of the heap instead of being searched for and removed.
import type { TiktokenBPE } from 'js-tiktoken/lite';

/**
 * A step generator yields after about this much work (bytes read or heap
 * entries popped). The sync driver ignores the yields; the async driver looks
 * at the clock at each one, so this bounds how far past its slice it can run.
 */
const STEP_WORK = 4096;

/** Rank keys are byte strings held as latin1 strings: one char per byte, so a key is a substring. */
type RankMap = Map<string, number>;

/** A work-counting generator: yields (void) now and then, returns its result. */
export type Steps<T> = Generator<void, T, void>;

export class BytePairEncoder {
  private readonly ranks: RankMap = new Map();
  private readonly bytesOf = new Map<number, Uint8Array>();
  /** No pair longer than the longest token can be a token: its lookup is skipped. */
  private readonly maxTokenBytes: number;
  private readonly pattern: string;
  private readonly specials: string[];
  private readonly specialBytes = new Map<number, Uint8Array>();

  constructor(bpe: TiktokenBPE) {
    this.pattern = bpe.pat_str;
    // The same parse as js-tiktoken's constructor: lines of "<name> <first rank> <base64 token>…",
    // ranks counted up from the first; a token listed twice keeps its last rank.
    const byToken = new Map<string, number>();
    for (const line of bpe.bpe_ranks.split('\n')) {
      if (!line) continue;
      const [, offsetStr, ...tokens] = line.split(' ');
      const offset = Number.parseInt(offsetStr, 10);
      tokens.forEach((t, i) => byToken.set(t, offset + i));
    }
    let longest = 0;
    for (const [token, rank] of byToken) {
      const bytes = Buffer.from(token, 'base64');
      this.ranks.set(bytes.toString('latin1'), rank);
      this.bytesOf.set(rank, new Uint8Array(bytes));
      longest = Math.max(longest, bytes.length);
    }
    this.maxTokenBytes = longest;
    this.specials = Object.keys(bpe.special_tokens);
    for (const [text, rank] of Object.entries(bpe.special_tokens)) this.specialBytes.set(rank, new TextEncoder().encode(text));
  }

  /**
   * The tokens of a text, as js-tiktoken's `encode(text)` gives them, as a
   * step generator. With `limit`, stops after the piece that reaches `limit`
   * tokens: the first `limit` tokens are then the same as the whole text's
   * (pieces are encoded independently, in order), and truncation needs no more.
   */
  *encodeSteps(text: string, limit = Infinity): Steps<number[]> {
    // js-tiktoken's default: every special token is disallowed, and its text in the input is an error.
    for (const s of this.specials) {
      if (text.includes(s)) throw new Error(`The text contains a special token that is not allowed: ${s}`);
    }
    const out: number[] = [];
    const re = new RegExp(this.pattern, 'ug');
    let work = 0;
    for (let m = re.exec(text); m !== null && out.length < limit; m = re.exec(text)) {
      const piece = m[0];
      // Never happens with tiktoken's patterns (every branch takes a char), but an empty
      // match would loop forever: step past it as String.prototype.matchAll does.
      if (piece === '') {
        re.lastIndex += 1;
        continue;
      }
      const bytes = toByteString(piece);
      work += bytes.length;
      const whole = bytes.length <= this.maxTokenBytes ? this.ranks.get(bytes) : undefined;
      if (whole !== undefined) out.push(whole);
      else if (bytes.length > 1) yield* this.mergeSteps(bytes, out);
      else {
        // A single byte that is no token: js-tiktoken pushes undefined here; o200k_base has all 256 bytes.
        throw new Error(`byte ${bytes.charCodeAt(0)} has no rank`);
      }
      if (work >= STEP_WORK) {
        work = 0;
        yield;
      }
    }
    return out;
  }

  /** A text from tokens, as js-tiktoken's `decode` makes it (unknown tokens dropped, bad UTF-8 replaced). */
  decode(tokens: readonly number[]): string {
    const parts: Uint8Array[] = [];
    for (const t of tokens) {
      const b = this.bytesOf.get(t) ?? this.specialBytes.get(t);
      if (b) parts.push(b);
    }
    return new TextDecoder('utf-8').decode(Buffer.concat(parts));
  }

  /** The rank of bytes [a, b) of a piece, or -1 when they are no token. */
  private rankOf(bytes: string, a: number, b: number): number {
    return b - a > this.maxTokenBytes ? -1 : (this.ranks.get(bytes.substring(a, b)) ?? -1);
  }

  /**
   * Byte-pair merge of one piece (at least two bytes, not itself a token),
   * appending its tokens to `out`. Parts are identified by their first byte:
   * part i spans [i, next[i]); pairRank[i] is the rank of part i joined with
   * the part after it (-1: no such token, no next part, or i is no longer a
   * part). The heap holds rank * 2^32 + i; an entry is current when
   * pairRank[i] still equals its rank. An entry left over from an earlier
   * pair at i with the same rank is indistinguishable from the current one
   * and equally right to act on: both say "merge the pair at i, rank r",
   * which is then the lowest, leftmost pair.
   */
  private *mergeSteps(bytes: string, out: number[]): Steps<void> {
    const n = bytes.length;
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    const pairRank = new Int32Array(n);
    const heap = new MinHeap(n);
    // Setting up a long piece is itself ~100 ms per MB (a lookup and a push per byte): it yields too.
    let work = 0;
    for (let i = 0; i < n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
      pairRank[i] = i + 2 <= n ? this.rankOf(bytes, i, i + 2) : -1;
      if (pairRank[i] >= 0) heap.push(pairRank[i] * 2 ** 32 + i);
      if (++work >= STEP_WORK) {
        work = 0;
        yield;
      }
    }
    while (heap.size > 0) {
      // Counted before the staleness test: stale entries can come out by the hundred thousand
      // in a row (a run of one letter leaves one behind for most merges).
      if (++work >= STEP_WORK) {
        work = 0;
        yield;
      }
      const key = heap.pop();
      const rank = Math.floor(key / 2 ** 32);
      const i = key - rank * 2 ** 32;
      if (pairRank[i] !== rank) continue; // stale: the pair at i changed or i was merged away
      // Merge part i with the part j after it: i now ends where j ended.
      const j = next[i];
      const k = next[j];
      pairRank[j] = -1;
      next[i] = k;
      if (k < n) prev[k] = i;
      pairRank[i] = k < n ? this.rankOf(bytes, i, next[k]) : -1;
      if (pairRank[i] >= 0) heap.push(pairRank[i] * 2 ** 32 + i);
      const p = prev[i];
      if (p >= 0) {
        pairRank[p] = this.rankOf(bytes, p, k);
        if (pairRank[p] >= 0) heap.push(pairRank[p] * 2 ** 32 + p);
      }
    }
    for (let i = 0; i < n; i = next[i]) {
      const r = this.rankOf(bytes, i, next[i]);
      // js-tiktoken drops a part that is no token; every part here is a token or a single byte.
      if (r >= 0) out.push(r);
      if (++work >= STEP_WORK) {
        work = 0;
        yield;
      }
    }
  }
}

/** A piece's UTF-8 bytes as a latin1 string (one char per byte); ASCII is already that. */
function toByteString(piece: string): string {
  return /^[\x00-\x7f]*$/.test(piece) ? piece : Buffer.from(piece, 'utf8').toString('latin1');
}

/** A binary min-heap of non-negative numbers below 2^53 in a growable Float64Array. */
class MinHeap {
  private a: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.a = new Float64Array(Math.max(16, capacity));
  }

  push(x: number): void {
    if (this.size === this.a.length) {
      const grown = new Float64Array(this.a.length * 2);
      grown.set(this.a);
      this.a = grown;
    }
    const a = this.a;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent] <= x) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = x;
  }

  pop(): number {
    const a = this.a;
    const top = a[0];
    const last = a[--this.size];
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && a[child + 1] < a[child]) child += 1;
      if (a[child] >= last) break;
      a[i] = a[child];
      i = child;
    }
    a[i] = last;
    return top;
  }
}

/** Runs a step generator to its end at once. */
export function runSync<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Runs a step generator in slices of about `sliceMs` of the event loop,
 * giving the loop back (setImmediate: after pending I/O, unlike a microtask)
 * between slices, so timers, heartbeats and sockets keep being served.
 */
export async function runInSlices<T>(steps: Steps<T>, sliceMs = 10): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}
