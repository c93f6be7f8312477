// The model and tool calls running in this worker process, by the run they
// belong to, so a Stop taken by the loop in this same process reaches them at
// once instead of at their next heartbeat (worker/sinks.ts wires the
// workflow's `calls.stop` sink to stopRun). Heartbeats then carry a Stop only
// to calls running in other processes, and can be rare.
//
// Temporal only accepts "cancelled" as an attempt's outcome once the server
// has recorded the workflow's request to cancel it, and that request is still
// on its way when the sink runs (the sink runs before the workflow task that
// carries it completes). So an attempt stopped here completes asynchronously:
// it hands its task back to the SDK (CompleteAsyncError) and reports the
// cancellation itself, retrying until the server has the request.
import { CancelledFailure, CompleteAsyncError, type Context } from '@temporalio/activity';
import { ActivityNotFoundError } from '@temporalio/client';

/** How long an attempt stopped here keeps offering its cancellation before the server's heartbeat timeout takes over. */
const REPORT_FOR_MS = 30_000;
/**
 * Between offers: the workflow task carrying the request usually lands within
 * tens of milliseconds, and the run's result waits for it, so offer often at
 * first (each offer waits for the previous answer), then back off.
 */
const retryAfterMs = (elapsedMs: number) => (elapsedMs < 1000 ? 10 : 100);

export interface RunningCall {
  /** Aborted when Temporal cancels the attempt or a Stop of its run is taken in this process. */
  signal: AbortSignal;
  /** Sleeps, or rejects with a CancelledFailure once `signal` fires. */
  sleep(ms: number): Promise<void>;
  /**
   * What the attempt throws for `err`: `err` itself, or, when the call was
   * stopped here and `err` is how it stopped, a CompleteAsyncError while the
   * cancellation is reported in the background. `details` go with a
   * cancellation, either way, to the workflow (the CancelledFailure's details).
   */
  outcome(err: unknown, details?: unknown): unknown;
  /** Leaves the registry (always, in a finally). */
  release(): void;
}

export class RunningCalls {
  private readonly byRun = new Map<string, Set<AbortController>>();

  /**
   * Registers the current attempt. Local activities are not registered: the
   * worker running the loop cancels them itself, at once.
   */
  enter(activity: Context): RunningCall {
    const here = new AbortController();
    const signal = AbortSignal.any([activity.cancellationSignal, here.signal]);
    const exec = activity.info.workflowExecution;
    const key = exec && !activity.info.isLocal ? runKey(exec.workflowId, exec.runId) : null;
    if (key !== null) {
      let set = this.byRun.get(key);
      if (!set) this.byRun.set(key, (set = new Set()));
      set.add(here);
    }
    return {
      signal,
      sleep: (ms) => sleepUnless(signal, ms),
      outcome: (err, details) => {
        if (!isStop(err, signal)) return err;
        const stoppedHere = here.signal.aborted && !activity.cancellationSignal.aborted;
        if (stoppedHere) {
          reportCancelled(activity, details);
          return new CompleteAsyncError();
        }
        // Temporal cancelled the attempt (a heartbeat carried the Stop): the SDK reports a CancelledFailure with its details.
        if (details === undefined || !activity.cancellationSignal.aborted) return err;
        return new CancelledFailure(err instanceof Error ? err.message : 'cancelled', [details]);
      },
      release: () => {
        if (key === null) return;
        const set = this.byRun.get(key);
        set?.delete(here);
        if (set?.size === 0) this.byRun.delete(key);
      },
    };
  }

  /** Stops every call of this execution running here; returns how many. */
  stopRun(workflowId: string, runId: string, reason: string): number {
    const set = this.byRun.get(runKey(workflowId, runId));
    if (!set) return 0;
    for (const c of set) c.abort(new CancelledFailure(reason));
    return set.size;
  }
}

const runKey = (workflowId: string, runId: string) => `${workflowId}\n${runId}`;

/** The error a call throws because its signal fired: the signal's reason, a CancelledFailure, or an AbortError. */
function isStop(err: unknown, signal: AbortSignal): boolean {
  return err === signal.reason || err instanceof CancelledFailure || (err instanceof Error && err.name === 'AbortError');
}

function sleepUnless(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve();
    }, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Reports the attempt cancelled once the server has the workflow's request
 * (a few milliseconds after the Stop). Gives up when the activity is gone
 * (completed, timed out, or its run closed) or after REPORT_FOR_MS; then the
 * heartbeat timeout ends the attempt, and the workflow's cancellation of the
 * retry ends the call.
 */
function reportCancelled(activity: Context, details: unknown): void {
  const { taskToken } = activity.info;
  const client = activity.client;
  const started = Date.now();
  void (async () => {
    for (;;) {
      await new Promise((r) => setTimeout(r, retryAfterMs(Date.now() - started)));
      try {
        await client.activity.reportCancellation(taskToken, details);
        return;
      } catch (err) {
        if (err instanceof ActivityNotFoundError || Date.now() - started > REPORT_FOR_MS) return;
      }
    }
  })();
}
