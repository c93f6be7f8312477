// Signed decisions (docs/security.md, "Signed decisions"): with AGENT_APPROVERS, a decision on
// a listed tool (or a listed raiseBudget / reconcile / steer) carries an
// Ed25519 signature over the canonical JSON of
//   {argsHash, by, callId, decision, expiresAt, workflowId}
// so `by` is no longer whatever the sender typed: only the holder of a listed
// private key can move the call, only this call of this run, only this way,
// only these arguments, and only until expiresAt. The workflow verifies
// (deterministic pure JS, no Node built-in: it bundles into the sandbox); the
// CLI, AgentClient and tests sign with the same code. Private keys never
// reach the workflow or its history; the policy's public keys do (recorded in
// the run's configuration at start, so a replay and a later worker decide as
// the run did).
import { ed25519 } from '@noble/curves/ed25519.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { canonicalJson } from './args-hash.js';

/** Decisions other than approve/reject that a policy may list. */
export const SIGNED_OTHER_DECISIONS = ['raiseBudget', 'reconcile', 'steer'] as const;
/** A decision other than approve/reject that a policy may list: `raiseBudget`, `reconcile` or `steer`. */
export type OtherDecision = 'raiseBudget' | 'reconcile' | 'steer';
/** Every decision a signature may cover. */
export type SignedDecisionName = 'approve' | 'reject' | OtherDecision;

/**
 * The approvers policy (the file AGENT_APPROVERS names, or AgentPlugin's
 * `approvers` option). `approvers`: name → base64 raw 32-byte Ed25519 public
 * key, or a list of them (a rotation lists the old and the new key for a
 * while). `tools`: tool → the approvers who may decide its calls. `decisions`
 * (optional, our extension): raiseBudget / reconcile / steer → who may send
 * them; unlisted, they need no signature.
 */
export interface ApproverPolicy {
  /** Approver name → base64 raw 32-byte Ed25519 public key, or several (a rotation). */
  approvers: Record<string, string | string[]>;
  /** Tool → the approvers who may decide its calls; a tool not listed is decided unsigned. */
  tools: Record<string, string[]>;
  /** raiseBudget / reconcile / steer → the approvers who may send them; unlisted ones need no signature. */
  decisions?: Partial<Record<OtherDecision, string[]>>;
}

/** The fields a signature covers, in the contract's names. */
export interface SignedFields {
  /** SHA-256 hex of the call's canonical arguments; for raiseBudget / steer / reconcile, of the update's own fields (signedArgsOf). */
  argsHash: string;
  /** The approver's name, as the policy lists it. */
  by: string;
  /** The call decided; "" for raiseBudget and steer (no call). */
  callId: string;
  /**
   * What names the one thing decided, across reused ids: for approve, reject
   * and reconcile the call's idempotency key `<workflowId>@<chain>/call<n>`
   * (the status query's interruption.callKey); for raiseBudget and steer the
   * run chain `<workflowId>@<chain>` (the status query's runKey). `<chain>` is
   * the first execution's run id: a later run reusing the workflow id has
   * another, and `<n>` counts the run's calls, so a reused call id has another.
   */
  callKey: string;
  /** What is decided. */
  decision: SignedDecisionName;
  /** ISO-8601 UTC, e.g. 2026-12-02T21:00:00.000Z. */
  expiresAt: string;
  /** The tool of the call decided; "" for raiseBudget and steer (no call). */
  toolName: string;
  /** The run decided for. */
  workflowId: string;
}

/** What a sender adds to a decision's payload: `signature` is base64 of the 64-byte signature. */
export interface SignatureFields {
  by?: string;
  expiresAt?: string;
  signature?: string;
  /** Optional: names the run signed for, so a signature sent to another run is refused as such. */
  workflowId?: string;
  /** Optional: the callKey signed for, so a signature sent to another occurrence or run chain is refused as such. */
  callKey?: string;
  /** Optional: the tool signed for, so a signature sent to another tool's call is refused as such. */
  toolName?: string;
}

/** The fields a signature covers, in the order canonical JSON puts them (what docs and error texts list). */
export const SIGNED_FIELD_NAMES = ['argsHash', 'by', 'callId', 'callKey', 'decision', 'expiresAt', 'toolName', 'workflowId'] as const;

/** The exact bytes signed: UTF-8 of the canonical JSON (keys sorted, no spaces). */
export function signedMessage(f: SignedFields): Uint8Array {
  const { argsHash, by, callId, callKey, decision, expiresAt, toolName, workflowId } = f;
  return utf8ToBytes(canonicalJson({ argsHash, by, callId, callKey, decision, expiresAt, toolName, workflowId }));
}

/**
 * What single use is decided on: SHA-256 (hex) of the signed message. The
 * same decision signed by the same key is the same message whatever text
 * carried its signature (Ed25519 signs deterministically), so no re-encoding
 * and no second signature over it makes it new.
 */
export function messageKey(f: SignedFields): string {
  return bytesToHex(sha256(signedMessage(f)));
}

/** The signature of a decision: base64 of the Ed25519 signature over {@link signedMessage}, by a 32-byte private key (seed). */
export function signDecision(f: SignedFields, privateKey: Uint8Array): string {
  return toBase64(ed25519.sign(signedMessage(f), privateKey));
}

/** The base64 raw 32-byte Ed25519 public key of a private key (seed): what the approvers policy lists. */
export function publicKeyOf(privateKey: Uint8Array): string {
  return toBase64(ed25519.getPublicKey(privateKey));
}

/** A fresh key pair: 32-byte private key (seed) and its public key, both base64. */
export function newKeyPair(seed?: Uint8Array): { privateKey: string; publicKey: string } {
  const { secretKey, publicKey } = ed25519.keygen(seed);
  return { privateKey: toBase64(secretKey), publicKey: toBase64(publicKey) };
}

/** Whether `signature` (base64) is a signature of these fields by `publicKey` (base64); false for anything malformed, never throws. */
export function verifySignature(f: SignedFields, signature: string, publicKey: string): boolean {
  const sig = fromCanonicalBase64(signature);
  const pub = fromBase64(publicKey);
  if (!sig || sig.length !== 64 || !pub || pub.length !== 32) return false;
  try {
    return ed25519.verify(sig, signedMessage(f), pub);
  } catch {
    // A point that does not decode is a signature that does not verify, not a fault.
    return false;
  }
}

/** Who the policy lists for a tool, or for one of the other decisions; null when unlisted (no signature needed). */
export function listedFor(policy: ApproverPolicy | undefined, what: { tool: string } | { decision: OtherDecision }): string[] | null {
  if (!policy) return null;
  const table: Record<string, string[] | undefined> = 'tool' in what ? policy.tools : (policy.decisions ?? {});
  const name = 'tool' in what ? what.tool : what.decision;
  return Object.hasOwn(table, name) ? (table[name] ?? []) : null;
}

/** A signed decision's check: refused with the reason, or taken with the key single use is decided on. */
export type SignatureVerdict = { ok: false; problem: string } | { ok: true; messageKey: string };

/** What a run would sign for this decision: all but the signer and the expiry, which the payload brings. */
export type ExpectedFields = Omit<SignedFields, 'by' | 'expiresAt'>;

/** A signature's text as the workflow takes it: standard base64 of 64 bytes, padded, no whitespace (88 characters). */
export const SIGNATURE_TEXT = 'standard base64 of the 64-byte signature (88 characters, "=" padded, no whitespace, no URL-safe "-" or "_")';

/**
 * Why a signed decision is refused, or the message key it was taken under.
 * `expected` is what this run would sign (its workflow id, the awaited call
 * and its callKey and tool, the verdict, the call's argsHash); `sent` the
 * payload's own fields; `nowMs` the workflow's clock. Checks who first
 * (listed, has a key), then the signature over what the payload says it
 * signed, then that what it signed is this decision: a whole payload replayed
 * elsewhere is named as such, a spliced one does not verify.
 */
export function checkSignature(policy: ApproverPolicy, listed: string[], subject: string, expected: ExpectedFields, sent: unknown, nowMs: number, source = 'AGENT_APPROVERS'): SignatureVerdict {
  const refuse = (problem: string): SignatureVerdict => ({ ok: false, problem });
  const s = (typeof sent === 'object' && sent !== null ? sent : {}) as Record<string, unknown>;
  const by = s.by;
  if (typeof s.signature !== 'string' || s.signature === '') return refuse(`signature required: ${subject} is listed in ${source} (may decide: ${listed.join(', ') || 'nobody'}); sign it (agent-harness ${expected.decision} … --key FILE)`);
  if (fromCanonicalBase64(s.signature)?.length !== 64) return refuse(`signature must be ${SIGNATURE_TEXT}; got ${s.signature.length} characters`);
  if (typeof by !== 'string' || by === '') return refuse('a signed decision must name its approver in "by"');
  if (!listed.includes(by)) return refuse(`approver ${JSON.stringify(by)} is not listed for ${subject} (may decide: ${listed.join(', ') || 'nobody'})`);
  const keys = keysOf(policy, by);
  if (keys.length === 0) return refuse(`approver ${JSON.stringify(by)} has no public key in ${source}`);
  if (typeof s.expiresAt !== 'string') return refuse('a signed decision must carry expiresAt (ISO-8601 UTC)');
  const expiresMs = Date.parse(s.expiresAt);
  if (!Number.isFinite(expiresMs)) return refuse(`expiresAt is not an ISO-8601 time: ${JSON.stringify(s.expiresAt)}`);
  const text = (field: string, own: string): string => (typeof s[field] === 'string' ? (s[field] as string) : own);
  const claimed: SignedFields = {
    ...expected,
    by,
    expiresAt: s.expiresAt,
    // What the payload says it signed; a field it does not name is this run's.
    workflowId: text('workflowId', expected.workflowId),
    callKey: text('callKey', expected.callKey),
    toolName: text('toolName', expected.toolName),
    argsHash: text('argsHash', expected.argsHash).toLowerCase(),
    decision: text('decision', expected.decision) as SignedDecisionName,
  };
  if (!keys.some((k) => verifySignature(claimed, s.signature as string, k))) {
    return refuse(`signature does not verify: not made by ${JSON.stringify(by)}'s listed key over ${canonicalJson(claimed)}`);
  }
  if (claimed.workflowId !== expected.workflowId) return refuse(`signature is for another run: signed for workflow ${JSON.stringify(claimed.workflowId)}, this is ${JSON.stringify(expected.workflowId)}`);
  if (claimed.callKey !== expected.callKey) return refuse(callKeyMismatch('signature', claimed.callKey, expected.callKey));
  if (claimed.toolName !== expected.toolName) return refuse(`signature is for another tool: signed for ${JSON.stringify(claimed.toolName)}, this call is ${JSON.stringify(expected.toolName)}`);
  if (claimed.decision !== expected.decision) return refuse(`signature is for another decision: signed ${JSON.stringify(claimed.decision)}, this is ${JSON.stringify(expected.decision)}`);
  if (claimed.argsHash !== expected.argsHash) return refuse(`signature is for other arguments: signed argsHash ${claimed.argsHash}, this is ${expected.argsHash}`);
  if (expiresMs <= nowMs) return refuse(`signature expired at ${new Date(expiresMs).toISOString()} (workflow time ${new Date(nowMs).toISOString()})`);
  return { ok: true, messageKey: messageKey(claimed) };
}

/** Why a signed decision is refused, or null: checkSignature without the message key. */
export function signatureProblem(policy: ApproverPolicy, listed: string[], subject: string, expected: ExpectedFields, sent: unknown, nowMs: number, source?: string): string | null {
  const v = checkSignature(policy, listed, subject, expected, sent, nowMs, source);
  return v.ok ? null : v.problem;
}

/** The run chain a callKey names: `<workflowId>@<chain>`, before the call's part. */
export function runKeyOf(callKey: string): string {
  const slash = callKey.indexOf('/', callKey.lastIndexOf('@'));
  return slash < 0 ? callKey : callKey.slice(0, slash);
}

/**
 * Why a decision naming callKey `named` does not decide `here`: another run
 * chain of the same workflow id, or another call (another occurrence of a
 * reused call id). `what`: a signature's claim, or a payload's (unsigned).
 */
export function callKeyMismatch(what: 'signature' | 'decision', named: string, here: string): string {
  const verb = what === 'signature' ? 'signed for' : 'names';
  const workflowOf = (key: string) => runKeyOf(key).slice(0, Math.max(0, runKeyOf(key).lastIndexOf('@')));
  if (workflowOf(named) !== workflowOf(here)) return `${what} is for another run: ${verb} ${JSON.stringify(named)}, this is workflow ${JSON.stringify(workflowOf(here))}`;
  if (runKeyOf(named) !== runKeyOf(here)) {
    return `${what} is for another run of this workflow id: ${verb} run chain ${JSON.stringify(runKeyOf(named))}, this is ${JSON.stringify(runKeyOf(here))} (a workflow id used again is a new run)`;
  }
  return `${what} is for another call: ${verb} ${JSON.stringify(named)}, the one here is ${JSON.stringify(here)} (a call id used again is another call: decide the one awaiting, the status query's interruption.callKey)`;
}

function keysOf(policy: ApproverPolicy, by: string): string[] {
  if (!Object.hasOwn(policy.approvers, by)) return [];
  const k = policy.approvers[by];
  return typeof k === 'string' ? [k] : k;
}

/**
 * What a raiseBudget / steer / reconcile signature binds, as its argsHash:
 * the update's own fields but the signature's (so the signed amount, message
 * or outcome is the one applied).
 */
export function signedArgsOf(input: unknown): Record<string, unknown> {
  const o = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const { signature: _s, expiresAt: _e, workflowId: _w, by: _b, argsHash: _a, decision: _d, callKey: _k, toolName: _t, ...rest } = o;
  return rest;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

// Own base64: the workflow sandbox has no Buffer, and one code path for signer and verifier.
export function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] + (i + 1 < bytes.length ? B64[(n >> 6) & 63] : '=') + (i + 2 < bytes.length ? B64[n & 63] : '=');
  }
  return out;
}

/**
 * Standard base64 exactly as toBase64 writes it: the standard alphabet, "="
 * padded to a multiple of 4, no whitespace, zero pad bits. Null otherwise.
 * Signatures are read with this: one byte string has one accepted text.
 */
export function fromCanonicalBase64(text: string): Uint8Array | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const bytes = fromBase64(text);
  return bytes !== null && toBase64(bytes) === text ? bytes : null;
}

/**
 * Standard or URL-safe base64, padding optional, surrounding whitespace
 * ignored; null when it is not base64. Lenient on purpose, for what a person
 * types or keeps in their own files (key files, the policy's public keys);
 * never for a signature (fromCanonicalBase64).
 */
export function fromBase64(text: string): Uint8Array | null {
  const t = text.trim().replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(t) || t.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((t.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let j = 0;
  for (const c of t) {
    acc = (acc << 6) | B64.indexOf(c);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >> bits) & 255;
    }
  }
  return out;
}

/** Checks a parsed policy file; throws naming what is wrong (the worker refuses to start on it). */
export function parseApproverPolicy(raw: unknown, source: string): ApproverPolicy {
  const fail = (why: string): never => {
    throw new Error(`${source}: ${why}; expected {"approvers": {"alice": "<base64 Ed25519 public key>"}, "tools": {"delete_file": ["alice"]}}`);
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('not a JSON object');
  const o = raw as Record<string, unknown>;
  const approvers: Record<string, string | string[]> = {};
  if (typeof o.approvers !== 'object' || o.approvers === null || Array.isArray(o.approvers)) fail('"approvers" must be an object of name → public key');
  for (const [name, v] of Object.entries(o.approvers as Record<string, unknown>)) {
    const keys = typeof v === 'string' ? [v] : Array.isArray(v) ? v : fail(`approver ${JSON.stringify(name)}: a base64 key or a list of them`);
    for (const k of keys) if (typeof k !== 'string' || fromBase64(k)?.length !== 32) fail(`approver ${JSON.stringify(name)}: ${JSON.stringify(k)} is not a base64 32-byte Ed25519 public key`);
    approvers[name] = typeof v === 'string' ? v : [...(keys as string[])];
  }
  const lists = (field: 'tools' | 'decisions', allowed?: readonly string[]): Record<string, string[]> => {
    const t = o[field];
    if (t === undefined) return {};
    if (typeof t !== 'object' || t === null || Array.isArray(t)) fail(`"${field}" must be an object of name → approver names`);
    const out: Record<string, string[]> = {};
    for (const [name, v] of Object.entries(t as Record<string, unknown>)) {
      if (allowed && !allowed.includes(name)) fail(`"decisions" lists ${JSON.stringify(name)}; it may list ${allowed.join(', ')}`);
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) fail(`${field}.${name} must be a list of approver names`);
      for (const who of v as string[]) if (!Object.hasOwn(approvers, who)) fail(`${field}.${name} names ${JSON.stringify(who)}, who is not in "approvers"`);
      out[name] = [...(v as string[])];
    }
    return out;
  };
  const tools = lists('tools');
  const decisions = lists('decisions', SIGNED_OTHER_DECISIONS);
  return { approvers, tools, ...(Object.keys(decisions).length ? { decisions } : {}) };
}
