// Who may decide what, and when: the one call the run is parked on takes a
// decision; anything else (an unknown, decided or future call id, a malformed
// payload, an argsHash that names other arguments) is refused with a reason
// the trace records. A payload's shape is checked by its schema
// (common/signal-schemas.ts). Pure: no Temporal import.
import type { Decision } from '../common/transcript-text.js';
import type { ToolName } from '../common/contract.js';
import { argsHashSchema, decisionSchema, payloadProblem, verdictSchema } from '../common/signal-schemas.js';
import { callKeyMismatch } from '../common/signed-decision.js';

export interface AwaitingApproval {
  /** The call's idempotency key: a decision belongs to one call of one turn. */
  key: string;
  callId: string;
  toolName: ToolName;
  args: Record<string, unknown>;
  /** SHA-256 of the arguments' canonical JSON (common/args-hash.ts): a decision that names a hash must name this one. */
  argsHash: string;
  /** The ops setting (requireArgsHash) names this tool: an approval must carry argsHash. */
  hashRequired: boolean;
}

export type Verdict = 'approve' | 'reject';

/** Why a decision's signature does not let it decide this call (the run's approvers policy), or null. */
export type SignatureCheck = (call: AwaitingApproval, input: object, verdict: Verdict) => string | null;

export class ApprovalRules {
  awaiting: AwaitingApproval | null = null;

  /** Decisions by idempotency key; carried across continue-as-new. */
  constructor(
    readonly decisions: Record<string, Decision> = {},
    /** Absent: no policy (runs started before one, or without AGENT_APPROVERS): decisions are taken unsigned, as ever. */
    private readonly signature?: SignatureCheck,
  ) {}

  /** Why a decision carried by this payload cannot be taken now, or null. */
  problem(input: unknown, verdict: unknown): string | null {
    const malformed = payloadProblem(decisionSchema(), input) ?? payloadProblem(verdictSchema(), verdict);
    if (malformed) return malformed;
    const { callId } = input as { callId: string };
    // Two decisions can reach one activation (sent while the worker was down,
    // or in one batch): the loop has not resumed yet, so the call still looks
    // awaited. The first decision is final; a later one never replaces it.
    // The awaited call is asked by its own key: an earlier call that carried
    // the same id (providers reuse them) has nothing to say about this one.
    if (this.awaiting?.callId === callId) {
      const taken = this.decisions[this.awaiting.key];
      if (taken) return decidedText(callId, taken);
      // The signature after the plainer argsHash reason; then what an unsigned
      // payload names (a signed one's callKey and tool were judged as signed).
      return (
        hashProblem(this.awaiting, input as object, verdict as Verdict) ??
        this.signature?.(this.awaiting, input as object, verdict as Verdict) ??
        bindingProblem(this.awaiting, input as object)
      );
    }
    const decided = this.alreadyDecided(callId);
    if (decided) return decided;
    if (!this.awaiting) return `no call is awaiting a decision (got callId ${JSON.stringify(callId)})`;
    if (this.awaiting.callId !== callId) {
      return `call ${JSON.stringify(callId)} is not awaiting a decision; ${JSON.stringify(this.awaiting.callId)} is`;
    }
    return null;
  }

  /** Why a decision for this call id comes too late: it was decided already (the first decision is final); null if not. */
  alreadyDecided(callId: string): string | null {
    const taken = this.decisionFor(callId);
    return taken ? decidedText(callId, taken) : null;
  }

  /** The latest decision taken for a call id (a provider may have sent the id more than once). */
  decisionFor(callId: string): Decision | null {
    for (const [key, d] of Object.entries(this.decisions).reverse()) {
      // Decisions carried from before callId was stored name the call only in their key.
      if (d.callId === callId || (d.callId === undefined && key.endsWith(`/${callId}`))) return d;
    }
    return null;
  }

  /** Records the decision for the awaited call; returns it, or the problem that kept it out. */
  take(input: unknown, verdict: unknown): { ok: true; call: AwaitingApproval; decision: Decision } | { ok: false; problem: string } {
    const problem = this.problem(input, verdict);
    if (problem || !this.awaiting) return { ok: false, problem: problem ?? 'no call is awaiting a decision' };
    const { reason, by, argsHash } = input as { reason?: unknown; by?: unknown; argsHash?: unknown };
    const decision: Decision = {
      callId: this.awaiting.callId,
      decision: verdict as Verdict,
      reason: typeof reason === 'string' && reason.trim() ? reason : null,
      by: typeof by === 'string' && by.trim() ? by : null,
      // Checked against the call's (hashProblem): the arguments this decision was bound to.
      ...(typeof argsHash === 'string' ? { argsHash: this.awaiting.argsHash } : {}),
    };
    this.decisions[this.awaiting.key] = decision;
    return { ok: true, call: this.awaiting, decision };
  }
}

/**
 * Why a decision that names its call's occurrence (callKey) or tool does not
 * decide the awaited call, or null. Signed or not: a payload copied from
 * another run of the same workflow id, or from an earlier call that carried
 * the same id, names another callKey and moves nothing here. A payload that
 * names neither is bound by its callId alone (unsigned), or by its signature.
 */
function bindingProblem(call: AwaitingApproval, input: object): string | null {
  const { callKey, toolName } = input as { callKey?: unknown; toolName?: unknown };
  if (callKey !== undefined && callKey !== null) {
    if (typeof callKey !== 'string') return `callKey must be a string (the status query's interruption.callKey), got ${JSON.stringify(callKey)}`;
    if (callKey !== call.key) return callKeyMismatch('decision', callKey, call.key);
  }
  if (toolName !== undefined && toolName !== null && toolName !== call.toolName) {
    return `decision is for another tool: it names ${JSON.stringify(toolName)}, call ${JSON.stringify(call.callId)} is ${JSON.stringify(call.toolName)}`;
  }
  return null;
}

/** Why a decision's argsHash does not bind it to the awaited call, or null. */
function hashProblem(call: AwaitingApproval, input: object, verdict: Verdict): string | null {
  const given = (input as { argsHash?: unknown }).argsHash;
  if (given === undefined || given === null) {
    return call.hashRequired && verdict === 'approve'
      ? `argsHash required: approving ${call.toolName} needs the call's argsHash (the status query's interruption.argsHash, next to its arguments)`
      : null;
  }
  const malformed = payloadProblem(argsHashSchema(), given);
  if (malformed) return malformed;
  if ((given as string).toLowerCase() === call.argsHash) return null;
  return `argsHash mismatch: the decision names arguments hashing to ${given}, but call ${JSON.stringify(call.callId)} (${call.toolName}) has arguments hashing to ${call.argsHash}: ${JSON.stringify(call.args).slice(0, 200)}`;
}

function decidedText(callId: string, taken: Decision): string {
  const verb = taken.decision === 'approve' ? 'approved' : 'rejected';
  return `already decided: call ${JSON.stringify(callId)} was ${verb}${taken.by ? ` by ${taken.by}` : ''}; the first decision is final`;
}
