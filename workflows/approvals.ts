// Who may decide what, and when: the one call the run is parked on takes a
// decision; anything else (an unknown, decided or future call id, a malformed
// payload) is refused with a reason the trace records. Pure: no Temporal import.
import type { Decision } from './loop';
import type { ToolName } from '../common/contract';

export interface AwaitingApproval {
  /** The call's idempotency key: a decision belongs to one call of one turn. */
  key: string;
  callId: string;
  toolName: ToolName;
  args: Record<string, unknown>;
}

export type Verdict = 'approve' | 'reject';

export class ApprovalDesk {
  awaiting: AwaitingApproval | null = null;

  /** Decisions by idempotency key; carried across continue-as-new. */
  constructor(readonly decisions: Record<string, Decision> = {}) {}

  /** Why a decision carried by this payload cannot be taken now, or null. */
  problem(input: unknown, verdict: unknown): string | null {
    const callId = typeof input === 'object' && input !== null ? (input as { callId?: unknown }).callId : undefined;
    if (typeof callId !== 'string') return 'callId must be a string';
    if (verdict !== 'approve' && verdict !== 'reject') return `decision must be "approve" or "reject", got ${JSON.stringify(verdict)}`;
    // Two decisions can reach one activation (sent while the worker was down,
    // or in one batch): the loop has not resumed yet, so the call still looks
    // awaited. The first decision is final; a later one never replaces it.
    // The awaited call is asked by its own key: an earlier call that carried
    // the same id (providers reuse them) has nothing to say about this one.
    if (this.awaiting?.callId === callId) {
      const taken = this.decisions[this.awaiting.key];
      return taken ? decidedText(callId, taken) : null;
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
    const { reason, by } = input as { reason?: unknown; by?: unknown };
    const decision: Decision = {
      callId: this.awaiting.callId,
      decision: verdict as Verdict,
      reason: typeof reason === 'string' && reason.trim() ? reason : null,
      by: typeof by === 'string' && by.trim() ? by : null,
    };
    this.decisions[this.awaiting.key] = decision;
    return { ok: true, call: this.awaiting, decision };
  }
}

function decidedText(callId: string, taken: Decision): string {
  const verb = taken.decision === 'approve' ? 'approved' : 'rejected';
  return `already decided: call ${JSON.stringify(callId)} was ${verb}${taken.by ? ` by ${taken.by}` : ''}; the first decision is final`;
}
