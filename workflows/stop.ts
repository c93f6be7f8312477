// Where a Stop is handled. Two ways in: the `cancel` signal, and Temporal's own
// cancellation (`temporal workflow cancel`, a parent's Stop reaching its child).
// Either cancels the scope the loop runs in, so whatever it awaits (a model
// call, a tool, a child, a parked approval) ends with a cancellation, and
// aborts the calls running in this worker process at once (the calls sink
// below); calls in other processes learn it from their next heartbeat.
import * as wf from '@temporalio/workflow';
import { proxySinks, type Sinks } from '@temporalio/workflow';
import type { CancelInput } from '../common/run-messages.js';
import type { PartialReply } from '../common/contract.js';
import { CANCELLED, cancelledExit } from './exits.js';
import type { Exit } from './exits.js';
import type { RunTrace } from './trace.js';
import type { Visibility } from './visibility.js';

/** Why a decision is refused once a Stop was taken (by a signal when applied, by an update's validator at once). */
export const STOPPING = 'the run is stopping: a Stop came first, so no call it holds will run';

// A Stop reaches a model or tool call only through the answer to the call's
// next heartbeat, and heartbeats are rare because each one is billed
// (node/heartbeat.ts). When the call runs in the worker process that runs
// this loop (the usual case: the SDK hands a workflow's activities to its own
// worker first), this sink aborts it at once, from that process's registry
// of running calls (activities/running-calls.ts). It is not a command: no
// history changes, and a replay never calls it.
export interface CallStopSinks extends Sinks {
  calls: { stop(reason: string): void };
}

const callSinks = proxySinks<CallStopSinks>();

/** Call right after cancelling the scope the calls run in: the cancel requests carry the Stop to calls in other processes. */
function stopCallsInThisProcess(reason: string): void {
  callSinks.calls.stop(reason);
}

export class Stop {
  /** The scope the whole loop runs in. */
  readonly scope = new wf.CancellationScope();
  /** What the cancel signal said, once it came. */
  private signalled: string | null = null;

  /** A Stop was taken: the cancel signal, or Temporal's own cancellation of the workflow. */
  get stopped(): boolean {
    return this.signalled !== null || this.scope.consideredCancelled;
  }

  /** Why the run stopped, in its result and trace; null when no cancel signal came. */
  get reason(): string | null {
    return this.signalled;
  }

  /** The exit of a stopped run; `partialReply`: what the reply it cut off had said. */
  exit(partialReply?: PartialReply): Exit {
    return cancelledExit(this.signalled, partialReply);
  }

  /**
   * The cancel signal is applied in its handler, not deferred like decisions:
   * it must interrupt whatever the loop waits for. Only a run still running
   * or parked stops (a finished run ignores it, on record).
   */
  cancel(request: CancelInput, ctx: { trace: RunTrace; visibility: Visibility }): void {
    if (this.signalled !== null || !ctx.visibility.isLive()) {
      ctx.trace.emit('signal_ignored', { signal: 'cancel', reason: 'the run is already stopping' });
      return;
    }
    const reason = (request as { reason?: unknown } | null)?.reason;
    this.signalled = typeof reason === 'string' && reason.trim() ? reason : 'cancelled';
    this.scope.cancel();
    stopCallsInThisProcess(this.signalled);
  }

  /**
   * Temporal's cancellation aborts this process's calls at once too; not a
   * command, so a replay is unchanged. Set right after the cancel signal's
   * handler, where it always was.
   */
  watchCancellation(): void {
    this.scope.cancelRequested.catch(() => {
      if (this.signalled === null) stopCallsInThisProcess(CANCELLED);
    });
  }
}
