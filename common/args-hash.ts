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

/** JSON with object keys sorted at every depth and no whitespace: the same text for the same arguments. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** SHA-256 hex (64 characters) of the arguments' canonical JSON. */
export function argsHash(args: unknown): string {
  return bytesToHex(sha256(utf8ToBytes(canonicalJson(args))));
}

/** A value an approver may send as argsHash: 64 hex digits (either case). */
export const isArgsHashText = (v: string): boolean => /^[0-9a-fA-F]{64}$/.test(v);
