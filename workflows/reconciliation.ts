// A person reconciles a write whose outcome is unknown (its attempt claimed the
// call and never reported: a crash, a timeout, a server that stalled). With
// `unknownOutcomes: "ask"` the run parks on such a call instead of telling the
// model "outcome unknown": someone who can look at the world says it happened
// (and what happened), or that it should be tried again. The `reconcile`
// update's handler only records the answer; the loop, where it waits, takes it.
import type { ReconcileInput } from '../common/run-messages.js';

/** The call a run is parked on, and what the tool could say about it. */
export interface AwaitingReconciliation {
  callId: string;
  toolName: string;
  args: unknown;
  /** The tool's own words: who started it, when, and why it did not report. */
  known: string;
}

export type ReconcileAnswer = { outcome: 'happened'; result: string; by: string | null } | { outcome: 'retry'; by: string | null };

export class ReconcileDesk {
  awaiting: AwaitingReconciliation | null = null;
  private answer: ReconcileAnswer | null = null;

  /** Why an answer is refused, or null. Pure: the update's validator and the handler both ask it. */
  problem(input: unknown): string | null {
    if (typeof input !== 'object' || input === null) return 'reconcile takes {"callId": "...", "outcome": "happened" | "retry", "result": "...", "by": "..."}';
    const r = input as Partial<Record<keyof ReconcileInput, unknown>>;
    if (typeof r.callId !== 'string' || r.callId === '') return 'reconcile: callId is required';
    if (this.awaiting === null) return `reconcile: no call of this run awaits reconciliation (call ${r.callId})`;
    if (r.callId !== this.awaiting.callId) return `reconcile: call ${r.callId} does not await reconciliation; ${this.awaiting.callId} (${this.awaiting.toolName}) does`;
    if (r.outcome !== 'happened' && r.outcome !== 'retry') return `reconcile: outcome must be "happened" or "retry", got ${JSON.stringify(r.outcome)}`;
    if (r.outcome === 'happened' && (typeof r.result !== 'string' || r.result.trim() === '')) {
      return 'reconcile: an outcome "happened" needs result: what happened, in words the model will read';
    }
    if (r.by !== undefined && typeof r.by !== 'string') return 'reconcile: by must be a string';
    if (this.answer !== null) return `reconcile: call ${r.callId} already has an answer`;
    return null;
  }

  /** Records an answer the validator accepted. */
  receive(input: ReconcileInput): void {
    const by = input.by ?? null;
    this.answer = input.outcome === 'happened' ? { outcome: 'happened', result: (input.result ?? '').trim(), by } : { outcome: 'retry', by };
  }

  hasAnswer(): boolean {
    return this.answer !== null;
  }

  /** The answer for the parked call, once; the desk is then free for the next. */
  take(): ReconcileAnswer | null {
    const a = this.answer;
    this.answer = null;
    this.awaiting = null;
    return a;
  }
}

/** The tool result the model reads once a person said the write happened. */
export function reconciledText(toolName: string, answer: Extract<ReconcileAnswer, { outcome: 'happened' }>): string {
  return `${answer.result}\n(${toolName}: its attempt did not report; ${answer.by ?? 'a person'} checked and confirmed that it happened.)`;
}
