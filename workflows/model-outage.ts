// A model provider that is down is waited out, not taken for a verdict. Each
// model call first gets the activity's own retries (6 attempts over about
// 31 s: a blip costs nothing more). When those end on a transient failure —
// unreachable, 5xx, 429, a timeout — the run waits in workflow code: a
// durable timer, then one more attempt, with the wait doubling up to
// MAX_WAIT_MS so the call resumes within a minute of the provider's return,
// for as long as the run's outage allowance (`modelOutageMs`). Two Actions a
// try (the timer and the attempt), one upsert on entering and one on leaving:
// a 10-minute outage costs about 30. Meanwhile the status, the details panel
// and AgentStatus say `waiting_for_model`, with the last error and the next
// try, and a Stop ends the run at once (the timer is in the Stop's scope).
import * as wf from '@temporalio/workflow';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import type { AgentActivities as Activities } from '../common/activity-contract.js';
import type { ModelOutageView, RunConfig } from '../common/contract.js';
import { DEFAULT_MODEL_OUTAGE_MS, isTransientProviderError, PROVIDER_TIMEOUT } from '../common/provider-errors.js';

/**
 * Guards the wait: histories recorded before it failed the run when the
 * activity's retries ran out. Asked only then, so a run that never meets an
 * outage writes no marker.
 */
export const MODEL_OUTAGE_PATCH = 'model-outage-wait-v1';

/** The first wait after the activity's own retries (which already spent ~31 s). */
export const FIRST_WAIT_MS = 15_000;
/** The longest wait between tries: the call resumes at most this long after the provider is back. */
export const MAX_WAIT_MS = 50_000;

type ModelActivities = wf.ActivityInterfaceFor<Activities>;

/** How a model call is made: through the outage wait. */
export interface ModelCalls {
  call<R>(make: (model: ModelActivities) => Promise<R>): Promise<R>;
}

/** What the wait shows and traces. */
export interface OutageSink {
  show(view: ModelOutageView | null): void;
  emit(type: 'model_waiting' | 'model_recovered', fields: Record<string, unknown>): void;
}

/** The failure's type and message when it is one an outage explains; null for a verdict (400, 401, 404, a bug). */
export function transientCause(err: unknown): { errorType: string; message: string } | null {
  if (!(err instanceof ActivityFailure)) return null;
  const cause = err.cause;
  if (cause instanceof ApplicationFailure && cause.type && isTransientProviderError(cause.type) && !cause.nonRetryable) {
    return { errorType: cause.type, message: cause.message };
  }
  // A call that hung past its timeout, or whose worker stopped heartbeating.
  if (cause instanceof TimeoutFailure && (cause.timeoutType === 'START_TO_CLOSE' || cause.timeoutType === 'HEARTBEAT')) {
    return { errorType: PROVIDER_TIMEOUT, message: `the model call timed out (${cause.timeoutType.toLowerCase().replace(/_/g, '-')})` };
  }
  return null;
}

/** The wait after `tries` failed tries: FIRST_WAIT_MS doubling, at most MAX_WAIT_MS. */
export function waitBefore(tries: number): number {
  return Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(tries, 10));
}

export class ModelOutage implements ModelCalls {
  constructor(
    private readonly cfg: Pick<RunConfig, 'modelOutageMs'>,
    private readonly activities: { model: ModelActivities; modelTry: ModelActivities },
    private readonly sink: OutageSink,
  ) {}

  async call<R>(make: (model: ModelActivities) => Promise<R>): Promise<R> {
    try {
      return await make(this.activities.model);
    } catch (err) {
      const cause = transientCause(err);
      if (!cause || !wf.patched(MODEL_OUTAGE_PATCH)) throw err;
      return this.waitOut(make, cause);
    }
  }

  private async waitOut<R>(make: (model: ModelActivities) => Promise<R>, first: { errorType: string; message: string }): Promise<R> {
    const allowanceMs = this.cfg.modelOutageMs ?? DEFAULT_MODEL_OUTAGE_MS;
    const since = Date.now();
    const giveUpAt = since + allowanceMs;
    let last = first;
    for (let tries = 0; ; tries += 1) {
      const waitMs = waitBefore(tries);
      const nextTryAt = Date.now() + waitMs;
      if (nextTryAt > giveUpAt) {
        this.sink.show(null);
        // The last error's type, so the result says what failed (and a resume may continue it).
        throw ApplicationFailure.create({
          type: last.errorType,
          message: `${last.message} (still failing after waiting ${Math.round((Date.now() - since) / 1000)} s, past the run's model outage allowance of ${Math.round(allowanceMs / 1000)} s: modelOutageMs)`,
        });
      }
      const view: ModelOutageView = { since: iso(since), tries, lastError: last.message, errorType: last.errorType, nextTryAt: iso(nextTryAt), giveUpAt: iso(giveUpAt) };
      this.sink.show(view);
      this.sink.emit('model_waiting', { tries, errorType: last.errorType, error: last.message, waitMs, nextTryAt: view.nextTryAt, giveUpAt: view.giveUpAt });
      await wf.sleep(waitMs);
      try {
        const answer = await make(this.activities.modelTry);
        this.sink.show(null);
        this.sink.emit('model_recovered', { tries: tries + 1, waitedMs: Date.now() - since });
        return answer;
      } catch (err) {
        const cause = transientCause(err);
        if (!cause) {
          this.sink.show(null);
          throw err;
        }
        last = cause;
      }
    }
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
