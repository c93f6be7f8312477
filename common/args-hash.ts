// The canonical-argument hash of a tool call: what an approval is bound to. A
// person (or a script) approves "delete_file with these arguments"; if the
// call awaiting a decision has other arguments, the decision is refused. The
// hash is SHA-256 (hex) of the arguments as canonical JSON: object keys
// sorted, no whitespace, JSON.stringify for every scalar. Anyone can compute
// it without the harness:
//   printf '%s' '{"path":"access.log"}' | sha256sum
// Pure JS (@noble/hashes): the workflow computes it deterministically, and the
// CLI and tests compute the same value.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** Deeper than this, canonicalJson refuses (a cycle would otherwise never end). Tool arguments stop at 64 (workflows/tool-calls.ts). */
export const MAX_CANONICAL_DEPTH = 10_000;

/**
 * JSON with object keys sorted at every depth and no whitespace: the same text
 * for the same arguments. Iterative, with its own stack: values from a model
 * or a caller nested thousands deep (10 KB of brackets nest 5,000 deep) would
 * overflow the call stack of a recursive walk, in workflow code, on every
 * workflow task.
 */
export function canonicalJson(v: unknown): string {
  const out: string[] = [];
  // Text to write as is, or a value to write, with how deep it sits; popped from the end.
  const todo: ({ text: string } | { value: unknown; depth: number })[] = [{ value: v, depth: 0 }];
  while (todo.length > 0) {
    const item = todo.pop() as { text: string } | { value: unknown; depth: number };
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    const { value: x, depth } = item;
    if (typeof x !== 'object' || x === null) {
      out.push(JSON.stringify(x) ?? 'null');
      continue;
    }
    if (depth >= MAX_CANONICAL_DEPTH) throw new RangeError(`canonicalJson: the value nests more than ${MAX_CANONICAL_DEPTH} levels deep (or refers to itself)`);
    const parts: ({ text: string } | { value: unknown; depth: number })[] = [];
    if (Array.isArray(x)) {
      parts.push({ text: '[' });
      for (let i = 0; i < x.length; i++) {
        if (i > 0) parts.push({ text: ',' });
        parts.push({ value: x[i] as unknown, depth: depth + 1 });
      }
      parts.push({ text: ']' });
    } else {
      const entries = Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      parts.push({ text: '{' });
      entries.forEach(([k, e], i) => {
        parts.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` }, { value: e, depth: depth + 1 });
      });
      parts.push({ text: '}' });
    }
    for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
  }
  return out.join('');
}

/** SHA-256 hex (64 characters) of the arguments' canonical JSON. */
export function argsHash(args: unknown): string {
  return bytesToHex(sha256(utf8ToBytes(canonicalJson(args))));
}

/** 16 hex digits of a dedupe cache key's SHA-256: how a model call is told which reads the cache answers (workflows/read-ahead.ts). */
export function cacheKeyDigest(key: string): string {
  return bytesToHex(sha256(utf8ToBytes(key))).slice(0, 16);
}

/** A value an approver may send as argsHash: 64 hex digits (either case). */
export const isArgsHashText = (v: string): boolean => /^[0-9a-fA-F]{64}$/.test(v);
