// Bounds on what the model or a caller sizes, where a Temporal server or the
// file system has a hard limit of its own: a search attribute value (2 KiB by
// default, `limit.searchAttributeValueSize`: past it the server TERMINATES the
// run), a workflow id (1,000 bytes, `limit.maxIDLength`: past it a child's
// start fails its parent's workflow task again and again) and a file name (255
// bytes on most file systems: past it ENAMETOOLONG). Each value is kept as it
// is when it fits, so what ops see and type stays readable, and otherwise cut
// with a hash of the whole: two long values stay apart. Pure and deterministic
// (sha256 in JS, no Node built-ins): workflow code uses it.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** The bytes a string takes in UTF-8 (a lone surrogate as U+FFFD, 3 bytes, as TextEncoder writes it). */
export function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

/** The longest prefix of `s` (whole characters) that takes at most `maxBytes` in UTF-8. */
export function utf8Prefix(s: string, maxBytes: number): string {
  let n = 0;
  let end = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n > maxBytes) break;
    end += ch.length;
  }
  return s.slice(0, end);
}

/**
 * The longest call id a reply may carry. Providers' ids are short (OpenAI's
 * `call_…` and Anthropic's `toolu_…` are under 40 characters); the id travels
 * into a search attribute (AgentAwaitingCallId), a sub-agent's workflow id,
 * trace lines, approvals typed by people and the signed decisions over them,
 * each with a limit of its own: a 5,001-character id got the run terminated
 * by the server, a 1,101-character one on `research` failed every workflow
 * task.
 */
export const MAX_CALL_ID_CHARS = 128;

/** 32 hex digits (128 bits) of SHA-256: enough to keep any two values apart. */
export const shortHash = (s: string): string => bytesToHex(sha256(utf8ToBytes(s))).slice(0, 32);

/**
 * The most a Keyword search attribute the run upserts may take: half the
 * server's default 2 KiB, so a workflow id (at most 1,000 bytes) always fits
 * whole and `AgentParent="<id>"` still finds a child.
 */
export const MAX_KEYWORD_BYTES = 1000;
/** The most the Text attribute (AgentExitReason) may take: words, cut, never hashed. */
export const MAX_TEXT_BYTES = 1000;

/** A Keyword value the server always takes: as it is when it fits, else a prefix, "…", and the hash of the whole. */
export function boundedKeyword(v: string, maxBytes = MAX_KEYWORD_BYTES): string {
  if (utf8Length(v) <= maxBytes) return v;
  const tail = `…#${shortHash(v)}`;
  return `${utf8Prefix(v, maxBytes - utf8Length(tail))}${tail}`;
}

/** A Text value the server always takes: cut at a character boundary. */
export const boundedText = (v: string, maxBytes = MAX_TEXT_BYTES): string => utf8Prefix(v, maxBytes);

/**
 * The most a child workflow id the run derives may take: under the server's
 * 1,000 bytes, with room for the suffix of a resume's id (`…-resumed-1a2b3c`).
 */
export const MAX_DERIVED_ID_BYTES = 800;

/** A workflow id derived from a parent's: as it is when it fits, else a prefix, "…", the hash of the whole and the readable tail. */
export function boundedWorkflowId(id: string, tail: string, maxBytes = MAX_DERIVED_ID_BYTES): string {
  if (utf8Length(id) <= maxBytes) return id;
  const suffix = `…#${shortHash(id)}${tail}`;
  return `${utf8Prefix(id, Math.max(0, maxBytes - utf8Length(suffix)))}${suffix}`;
}

/**
 * The stem of a file named after a workflow id (a trace: `<stem>.<chain>.jsonl`).
 * A short id of plain printable ASCII stays readable, percent-encoded as
 * before (`/` of a child's id becomes %2F); any other id (long, or with a
 * character outside printable ASCII, which percent-encoding would triple) is
 * a readable prefix of its safe characters, `+`, and the hash of the whole
 * id. encodeURIComponent always encodes `+`, so a hashed stem is never
 * another id's readable one. At most ~150 bytes: far under the 255 of a name.
 */
export const MAX_READABLE_STEM = 120;
export function fileStem(workflowId: string): string {
  const encoded = encodeURIComponent(workflowId);
  if (/^[\x20-\x7e]*$/.test(workflowId) && encoded.length <= MAX_READABLE_STEM) return encoded;
  const readable = workflowId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
  return `${readable}+${shortHash(workflowId)}`;
}

/** Whether a file stem was hashed by fileStem (the workflow id is then read from inside the file). */
export const isHashedStem = (stem: string): boolean => /\+[0-9a-f]{32}$/.test(stem);
