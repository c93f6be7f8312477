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
import { canonicalJson } from './args-hash.js';

/** Decisions other than approve/reject that a policy may list. */
export const SIGNED_OTHER_DECISIONS = ['raiseBudget', 'reconcile', 'steer'] as const;
/** A decision other than approve/reject that a policy may list: `raiseBudget`, `reconcile` or `steer`. */
export type OtherDecision = 'raiseBudget' | 'reconcile' | 'steer';
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
  by: string;
  /** The call decided; "" for raiseBudget and steer (no call). */
  callId: string;
  decision: SignedDecisionName;
  /** ISO-8601 UTC, e.g. 2026-12-02T21:00:00.000Z. */
  expiresAt: string;
  workflowId: string;
}

/** What a sender adds to a decision's payload: `signature` is base64 of the 64-byte signature. */
export interface SignatureFields {
  by?: string;
  expiresAt?: string;
  signature?: string;
  /** Optional: names the run signed for, so a signature sent to another run is refused as such. */
  workflowId?: string;
}

/** The exact bytes signed: UTF-8 of the canonical JSON (keys sorted, no spaces). */
export function signedMessage(f: SignedFields): Uint8Array {
  const { argsHash, by, callId, decision, expiresAt, workflowId } = f;
  return utf8ToBytes(canonicalJson({ argsHash, by, callId, decision, expiresAt, workflowId }));
}

export function signDecision(f: SignedFields, privateKey: Uint8Array): string {
  return toBase64(ed25519.sign(signedMessage(f), privateKey));
}

export function publicKeyOf(privateKey: Uint8Array): string {
  return toBase64(ed25519.getPublicKey(privateKey));
}

/** A fresh key pair: 32-byte private key (seed) and its public key, both base64. */
export function newKeyPair(seed?: Uint8Array): { privateKey: string; publicKey: string } {
  const { secretKey, publicKey } = ed25519.keygen(seed);
  return { privateKey: toBase64(secretKey), publicKey: toBase64(publicKey) };
}

export function verifySignature(f: SignedFields, signature: string, publicKey: string): boolean {
  const sig = fromBase64(signature);
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

/**
 * Why a signed decision is refused, or null. `expected` is what this run
 * would sign (its workflow id, the awaited call, the verdict, the call's
 * argsHash); `sent` the payload's own fields; `nowMs` the workflow's clock.
 * Checks who first (listed, has a key), then the signature over what the
 * payload says it signed, then that what it signed is this decision: a whole
 * payload replayed elsewhere is named as such, a spliced one does not verify.
 */
export function signatureProblem(policy: ApproverPolicy, listed: string[], subject: string, expected: Omit<SignedFields, 'by' | 'expiresAt'>, sent: unknown, nowMs: number): string | null {
  const s = (typeof sent === 'object' && sent !== null ? sent : {}) as Record<string, unknown>;
  const by = s.by;
  if (typeof s.signature !== 'string' || s.signature === '') return `signature required: ${subject} is listed in AGENT_APPROVERS (may decide: ${listed.join(', ') || 'nobody'}); sign it (agent-harness ${expected.decision} … --key FILE)`;
  if (typeof by !== 'string' || by === '') return 'a signed decision must name its approver in "by"';
  if (!listed.includes(by)) return `approver ${JSON.stringify(by)} is not listed for ${subject} (may decide: ${listed.join(', ') || 'nobody'})`;
  const keys = keysOf(policy, by);
  if (keys.length === 0) return `approver ${JSON.stringify(by)} has no public key in AGENT_APPROVERS`;
  if (typeof s.expiresAt !== 'string') return 'a signed decision must carry expiresAt (ISO-8601 UTC)';
  const expiresMs = Date.parse(s.expiresAt);
  if (!Number.isFinite(expiresMs)) return `expiresAt is not an ISO-8601 time: ${JSON.stringify(s.expiresAt)}`;
  const claimed: SignedFields = {
    ...expected,
    by,
    expiresAt: s.expiresAt,
    // What the payload says it signed; a field it does not name is this run's.
    workflowId: typeof s.workflowId === 'string' ? s.workflowId : expected.workflowId,
    argsHash: typeof s.argsHash === 'string' ? s.argsHash.toLowerCase() : expected.argsHash,
    decision: typeof s.decision === 'string' ? (s.decision as SignedDecisionName) : expected.decision,
  };
  if (!keys.some((k) => verifySignature(claimed, s.signature as string, k))) {
    return `signature does not verify: not made by ${JSON.stringify(by)}'s listed key over ${canonicalJson(claimed)}`;
  }
  if (claimed.workflowId !== expected.workflowId) return `signature is for another run: signed for workflow ${JSON.stringify(claimed.workflowId)}, this is ${JSON.stringify(expected.workflowId)}`;
  if (claimed.decision !== expected.decision) return `signature is for another decision: signed ${JSON.stringify(claimed.decision)}, this is ${JSON.stringify(expected.decision)}`;
  if (claimed.argsHash !== expected.argsHash) return `signature is for other arguments: signed argsHash ${claimed.argsHash}, this is ${expected.argsHash}`;
  if (expiresMs <= nowMs) return `signature expired at ${new Date(expiresMs).toISOString()} (workflow time ${new Date(nowMs).toISOString()})`;
  return null;
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
  const { signature: _s, expiresAt: _e, workflowId: _w, by: _b, argsHash: _a, decision: _d, ...rest } = o;
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

/** Standard or URL-safe base64, padding optional; null when it is not base64. */
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
