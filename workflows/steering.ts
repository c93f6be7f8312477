// Steering as the run sees it: messages a person sends (`steer`, as a signal
// or a validated update) wait in ./steering-queue.ts's queue and enter the transcript
// at the next turn boundary, never between a call and its result. One with
// `interrupt` also declines the calls of the current reply not yet started,
// and ends a parked approval with a rejection. A signed steer (a policy that
// lists steer) is taken once: its signed message is remembered until it
// expires, across continue-as-new (./signatures-used.ts), so the same payload
// sent again, however its signature is encoded, is refused rather than
// queued twice.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import type { SteerInput } from '../common/run-messages.js';
import type { RunStatusView } from '../common/contract.js';
import { recordDeclined } from './call-results.js';
import type { Exit } from './exits.js';
import type { RunContext } from './run-context.js';
import { SteeringQueue, steerInputProblem, steerMessage, type QueuedSteer } from './steering-queue.js';
import type { PendingCall } from './tool-calls.js';
import { markSignatureUsed, otherSignatureProblem, updateRefused } from './refusals.js';

export class Steering {
  readonly queue: SteeringQueue;

  constructor(
    private readonly ctx: RunContext,
    carried: QueuedSteer[],
  ) {
    this.queue = new SteeringQueue(carried);
  }

  /** The `steer` signal: queued, or ignored on record with the reason. */
  steerSignal(steer: SteerInput): void {
    const problem = this.problem(steer);
    if (problem) this.ctx.trace.emit('signal_ignored', { signal: 'steer', reason: problem });
    else this.receive(steer, 'signal');
  }

  /** The `steer` update: queued, answered with the run's status. */
  steerUpdate(steer: SteerInput): RunStatusView {
    // Checked again: the state may have moved since the validator ran.
    const problem = this.problem(steer);
    if (problem) throw ApplicationFailure.create({ type: 'SteerRefused', message: problem, nonRetryable: true });
    this.receive(steer, 'update');
    const view = this.ctx.visibility.view();
    // An interrupt declines the call parked on an approval (Approvals.rejectForInterrupt)
    // as the loop wakes, just after this answer is written: answer with what it
    // does, not with the parking it ends. A decision received first for that
    // call is taken first: then the run is still parked as the view says.
    const parked = view.interruption;
    if (steer.interrupt === true && parked?.type === 'approval' && !this.decidedFirst(parked.callId)) {
      return { ...view, agentStatus: 'running', interruption: null, declinedByInterrupt: { callId: parked.callId, toolName: parked.toolName } };
    }
    return view;
  }

  /** Set by the run (Approvals): whether the parked call has a decision taken or received, which an interrupt does not override. */
  decidedFirst: (callId: string) => boolean = () => false;

  /** The `steer` update's validator. */
  validateSteer(steer: SteerInput): void {
    const problem = this.problem(steer);
    if (problem) throw updateRefused(problem);
  }

  /** The turn boundary: the messages due now enter the transcript, each naming who sent it and when. */
  applyDue(): void {
    for (const s of this.queue.takeDue(wf.workflowInfo().historyLength)) {
      this.ctx.state.messages.push(steerMessage(s));
      this.ctx.trace.emit('steered', { by: s.by, at: s.at, interrupt: s.interrupt, turn: this.ctx.state.turns, message: s.message.slice(0, 500) });
    }
  }

  /** Whether a boundary now would put a message in the transcript. */
  hasDue(): boolean {
    return this.queue.hasDue(wf.workflowInfo().historyLength);
  }

  /**
   * A call of the current reply that an `interrupt` message stops before it
   * starts: declined, with the message as the reason. False when none applies.
   */
  declineIfInterrupted(pending: PendingCall, toolName: string): boolean {
    const s = this.queue.interruptNow(wf.workflowInfo().historyLength);
    if (!s) return false;
    recordDeclined(this.ctx, pending.call, toolName, { decision: 'reject', reason: s.message, by: s.by }, { interrupted: true });
    return true;
  }

  /** The run ended: messages still queued will never be read, and the trace says so. */
  dropAll(exit: Exit): void {
    for (const s of this.queue.takeAll()) {
      this.ctx.trace.emit('steer_dropped', { by: s.by, at: s.at, reason: `the run ended (${exit.status}) before its next turn` });
    }
  }

  /**
   * Why a steering message cannot be taken now (a bad payload, a Stop, the
   * run's end, a signature already used), or null: the same answer in the
   * validator and the handler.
   */
  private problem(input: unknown): string | null {
    const exit = this.ctx.visibility.exit;
    if (exit !== null) return `the run has ended (${exit.status}): it takes no more messages; resume it with a new one`;
    if (this.ctx.stop.stopped) return 'the run is stopping: a Stop came first, so it takes no more messages';
    // A policy that lists steer: only a listed approver's signed message is taken, once (the signal path traces why not).
    return steerInputProblem(input) ?? otherSignatureProblem(this.ctx, 'steer', input, undefined);
  }

  /** Queues a checked message; it enters the transcript at the next turn boundary. */
  private receive(input: SteerInput, via: 'signal' | 'update'): void {
    markSignatureUsed(this.ctx, 'steer', input);
    const s = this.queue.receive(input, wf.workflowInfo().historyLength, new Date(Date.now()).toISOString());
    this.ctx.trace.emit('steer_queued', { by: s.by, at: s.at, interrupt: s.interrupt, via, queued: this.queue.size, message: s.message.slice(0, 500) });
    this.ctx.visibility.showDetails();
  }
}
