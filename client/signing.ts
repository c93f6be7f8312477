// Signing a decision on the client side (AgentClient, the CLI): the workflow
// verifies (workflows/refusals.ts). The private key stays in this process;
// only the signature, the approver's name, the expiry and what was signed for
// (the run's id, the callKey, the tool) travel.
import { argsHash } from '../common/args-hash.js';
import type { DecisionSignature } from '../common/run-messages.js';
import { fromBase64, signDecision, signedArgsOf, type SignedDecisionName } from '../common/signed-decision.js';

/** How long a signature is good for when the caller does not say: long enough for a slow network, short enough that a copied one goes stale. */
export const DEFAULT_SIGNATURE_TTL_MS = 10 * 60_000;

/** What signs a decision: AgentClient's approve/reject/steer/raiseBudget/reconcile take it next to `by`. */
export interface SigningOptions {
  /**
   * The approver's Ed25519 private key: its 32 raw bytes, or the text of a
   * key file `agent-harness keygen` wrote (base64 of the 32 bytes; `#` lines
   * are comments). Absent: the decision is sent unsigned.
   */
  key?: Uint8Array | string;
  /** How long the signature is valid, in ms (default 10 minutes); the workflow's clock decides. */
  expiresInMs?: number;
}

/** The 32-byte private key from raw bytes or a key file's text; throws saying what is wrong (never echoing the key). */
export function privateKeyOf(key: Uint8Array | string): Uint8Array {
  if (typeof key !== 'string') {
    if (key.length !== 32) throw new Error(`an Ed25519 private key is 32 bytes, got ${key.length}`);
    return key;
  }
  const body = key
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .join('');
  const bytes = fromBase64(body);
  if (!bytes || bytes.length !== 32) throw new Error('the key is not a base64 32-byte Ed25519 private key (as `agent-harness keygen` writes)');
  return bytes;
}

/**
 * The signature fields for a decision on a call (approve/reject): signed over
 * the call's argsHash, its callKey (the status query's interruption.callKey:
 * this occurrence of this call of this run chain) and its tool.
 */
export function signCall(o: { workflowId: string; callId: string; callKey: string; toolName: string; decision: 'approve' | 'reject'; argsHash: string; by: string } & SigningOptions): DecisionSignature & { argsHash: string } {
  const expiresAt = new Date(Date.now() + (o.expiresInMs ?? DEFAULT_SIGNATURE_TTL_MS)).toISOString();
  const hash = o.argsHash.toLowerCase();
  const signature = signDecision({ argsHash: hash, by: o.by, callId: o.callId, callKey: o.callKey, decision: o.decision, expiresAt, toolName: o.toolName, workflowId: o.workflowId }, privateKeyOf(o.key ?? ''));
  return { argsHash: hash, callKey: o.callKey, expiresAt, signature, toolName: o.toolName, workflowId: o.workflowId };
}

/**
 * Signs a raiseBudget / steer / reconcile input: its argsHash is the hash of
 * its own fields but the signature's (as sent, so after a JSON round trip).
 * `callKey`: the run chain for steer and raiseBudget (the status query's
 * runKey, `<workflowId>@<first run id>`), the parked call's
 * interruption.callKey for reconcile (with its `callId` and `toolName`).
 */
export function signOther<T extends object>(
  input: T,
  o: { workflowId: string; decision: Exclude<SignedDecisionName, 'approve' | 'reject'>; by: string; callKey: string; callId?: string; toolName?: string } & SigningOptions,
): T & DecisionSignature {
  const expiresAt = new Date(Date.now() + (o.expiresInMs ?? DEFAULT_SIGNATURE_TTL_MS)).toISOString();
  const hash = argsHash(signedArgsOf(JSON.parse(JSON.stringify(input)) as unknown));
  const toolName = o.toolName ?? '';
  const signature = signDecision({ argsHash: hash, by: o.by, callId: o.callId ?? '', callKey: o.callKey, decision: o.decision, expiresAt, toolName, workflowId: o.workflowId }, privateKeyOf(o.key ?? ''));
  return { ...input, callKey: o.callKey, expiresAt, signature, toolName, workflowId: o.workflowId };
}
