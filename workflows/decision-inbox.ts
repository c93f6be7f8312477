// Approve and reject decisions, from the moment their handler receives them
// to the moment they are applied. With the patch (deferred-signals-v1) a
// decision is not applied in its handler but when the loop waits for one
// (AgentRun.decisionOrTimeout drains the inbox; its condition only looks), or when the run
// ends. Within one workflow task, a signal and the model reply that proposes
// its call can reach the workflow in one activation (the signal's handler runs
// first, before the reply) or in two (the reply first: a worker had run ahead
// of history — a query answered from a replay filled its cache — and the task
// then brought only the signal). Applied where the loop waits, a decision
// meets the parked call either way, and a replay takes the path the first
// execution took. It counts only within the workflow task it arrived in: a
// call proposed in a later task is never decided blind.
import * as wf from '@temporalio/workflow';
import type { ApprovalDesk } from './approvals.js';
import { STOPPING } from './stop.js';
import type { TraceEventType } from './trace.js';

export type DecisionSignal = 'approve' | 'reject' | 'decide';

/** A decide update's answer: whether its decision was applied, to which call, or why not. */
export interface Ticket {
  done: boolean;
  taken: string | null;
  problem: string | null;
}

export interface ReceivedDecision {
  signal: DecisionSignal;
  input: unknown;
  verdict: unknown;
  ticket?: Ticket;
}

type Outcome = { ok: true; key: string } | { ok: false; problem: string };

export class DecisionInbox {
  /** `at`: the history length of the workflow task each arrived in. */
  private readonly pending: (ReceivedDecision & { at: number })[] = [];

  constructor(
    private readonly desk: ApprovalDesk,
    /** patched(deferred-signals-v1): histories recorded before applied decisions in their handler. */
    private readonly deferred: boolean,
    private readonly emit: (type: TraceEventType, fields: Record<string, unknown>) => void,
    /** A Stop was taken: no decision is applied after it (the call it would run never starts). */
    private readonly stopped: () => boolean = () => false,
  ) {}

  /** Decisions received and not applied yet. */
  hasPending(): boolean {
    return this.pending.length > 0;
  }

  receive(m: ReceivedDecision): void {
    if (!this.deferred) return this.apply(m, null);
    this.pending.push({ ...m, at: wf.workflowInfo().historyLength });
  }

  /** Applies the decisions received so far, in arrival order. */
  drain(): void {
    for (const m of this.pending.splice(0)) this.apply(m, m.at);
  }

  /** A decision received for this call and not applied yet: the first decision is final, so a second is refused at once. */
  pendingFor(callId: unknown): string | null {
    const first = this.pending.find((m) => (m.input as { callId?: unknown } | null)?.callId === callId);
    return first ? `already decided: call ${JSON.stringify(callId)} has a decision being applied; the first decision is final` : null;
  }

  private apply(m: ReceivedDecision, at: number | null): void {
    const stale = at !== null && at !== wf.workflowInfo().historyLength;
    const outcome = this.stopped()
      ? this.refuse(m.signal, m.input, { problem: STOPPING, reason: STOPPING })
      : stale
        ? this.refuse(m.signal, m.input, this.staleProblem(m.input))
        : this.decide(m.signal, m.input, m.verdict);
    if (m.ticket) {
      m.ticket.taken = outcome.ok ? outcome.key : null;
      m.ticket.problem = outcome.ok ? null : outcome.problem;
      m.ticket.done = true;
    }
  }

  /** Why a decision applied after its workflow task is refused: the call was decided already, or none awaited one then. */
  private staleProblem(input: unknown): { problem: string; reason: string } {
    const callId = (input as { callId?: unknown } | null)?.callId;
    const decided = typeof callId === 'string' ? this.desk.alreadyDecided(callId) : null;
    if (decided) return { problem: decided, reason: decided };
    const problem = 'no call was awaiting a decision when it arrived';
    return { problem, reason: `${problem} (got callId ${JSON.stringify(callId ?? null)})` };
  }

  private refuse(signal: DecisionSignal, input: unknown, why: { problem: string; reason: string }): Outcome {
    const callId = (input as { callId?: unknown } | null)?.callId ?? null;
    this.emit('signal_ignored', { signal, callId, reason: why.reason });
    return { ok: false, problem: why.problem };
  }

  /** Takes a decision for the awaited call, or refuses it (traced as signal_ignored). */
  private decide(signal: DecisionSignal, input: unknown, verdict: unknown): Outcome {
    const taken = this.desk.take(input, verdict);
    if (!taken.ok) {
      const callId = (input as { callId?: unknown } | null)?.callId ?? null;
      this.emit('signal_ignored', { signal, callId, reason: taken.problem });
      return { ok: false, problem: taken.problem };
    }
    this.emit('approval_decided', { callId: taken.call.callId, toolName: taken.call.toolName, ...taken.decision });
    return { ok: true, key: taken.call.key };
  }
}
