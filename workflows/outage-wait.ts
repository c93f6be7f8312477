// A model provider, or what a tool reaches, that is down is waited out, not
// taken for a verdict. Each
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
//
// Tool calls the same way (ToolOutage): after a tool activity's own retries
// (5 attempts over about 7.5 s) end on what the tool threw rather than
// reported (an MCP server that cannot be reached, no worker offering the
// tool during a deploy, a timeout), the call waits for `toolOutageMs` and
// the run shows `waiting_for_tool`. A write is safe to try again: the effect
// protocol keys it by the call's idempotency key, so it never acts twice.
import * as wf from '@temporalio/workflow';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import type { AgentActivities as Activities } from '../common/activity-contract.js';
import type { ModelOutageView, OutageKind, RunConfig, ToolOutageView } from '../common/contract.js';
import { DEFAULT_MODEL_OUTAGE_MS, DEFAULT_TOOL_OUTAGE_MS, isTransientProviderError, PROVIDER_TIMEOUT, TOOL_TIMEOUT } from '../common/provider-errors.js';
import type { ToolActivity } from './activity-options.js';


/** The first wait after the activity's own retries (which already spent ~31 s). */
export const FIRST_WAIT_MS = 15_000;
/** The longest wait between tries: the call resumes at most this long after the provider is back. */
export const MAX_WAIT_MS = 50_000;

type ModelActivities = wf.ActivityInterfaceFor<Activities>;

/** How a model call is made: through the outage wait. */
export interface ModelCalls {
  call<R>(make: (model: ModelActivities) => Promise<R>): Promise<R>;
}

/** What a wait shows and traces: the run's visibility (by kind) and the run's trace. */
export interface OutageSink {
  show(kind: OutageKind, view: ModelOutageView | ToolOutageView | null): void;
  emit(type: 'model_waiting' | 'model_recovered' | 'tool_waiting' | 'tool_recovered', fields: Record<string, unknown>): void;
}

/** Why a call is worth another try: the failure's type and message. */
export interface TransientCause {
  errorType: string;
  message: string;
}

/** The failure's type and message when it is one an outage explains; null for a verdict (400, 401, 404, a bug). */
export function transientCause(err: unknown): TransientCause | null {
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

/**
 * The failure's type and message when a tool's activity ran out of retries
 * on something another try may cure: whatever the tool threw (it reports
 * what the model can act on as a ToolError, which is no failure), unless it
 * said retrying cannot help (non-retryable), and timeouts. Null for a
 * cancellation and for a verdict.
 */
export function transientToolCause(err: unknown): TransientCause | null {
  if (!(err instanceof ActivityFailure)) return null;
  const cause = err.cause;
  if (cause instanceof ApplicationFailure && !cause.nonRetryable) return { errorType: cause.type || 'Error', message: cause.message };
  if (cause instanceof TimeoutFailure && (cause.timeoutType === 'START_TO_CLOSE' || cause.timeoutType === 'HEARTBEAT')) {
    return { errorType: TOOL_TIMEOUT, message: `the tool call timed out (${cause.timeoutType.toLowerCase().replace(/_/g, '-')})` };
  }
  return null;
}

/** One wait: what to try, what counts as transient, what to show and trace, and its allowance. */
interface Wait<R, V> {
  kind: OutageKind;
  allowanceMs: number;
  /** The configuration field that sets the allowance, named in the failure past it. */
  allowanceField: 'modelOutageMs' | 'toolOutageMs';
  first: TransientCause;
  attempt(): Promise<R>;
  transient(err: unknown): TransientCause | null;
  view(base: ModelOutageView): V;
  traced: Record<string, unknown>;
  names: { waiting: 'model_waiting' | 'tool_waiting'; recovered: 'model_recovered' | 'tool_recovered' };
}

/** Timer, one try, again, until a try answers, a verdict comes, or the allowance runs out (then the last error's type fails the run). */
async function waitOut<R, V extends ModelOutageView>(w: Wait<R, V>, sink: OutageSink): Promise<R> {
  const since = Date.now();
  const giveUpAt = since + w.allowanceMs;
  let last = w.first;
  for (let tries = 0; ; tries += 1) {
    const waitMs = waitBefore(tries);
    const nextTryAt = Date.now() + waitMs;
    if (nextTryAt > giveUpAt) {
      sink.show(w.kind, null);
      // The last error's type, so the result says what failed (and a resume may continue it).
      throw ApplicationFailure.create({
        type: last.errorType,
        message: `${last.message} (still failing after waiting ${Math.round((Date.now() - since) / 1000)} s, past the run's ${w.kind} outage allowance of ${Math.round(w.allowanceMs / 1000)} s: ${w.allowanceField})`,
      });
    }
    const view = w.view({ since: iso(since), tries, lastError: last.message, errorType: last.errorType, nextTryAt: iso(nextTryAt), giveUpAt: iso(giveUpAt) });
    sink.show(w.kind, view);
    sink.emit(w.names.waiting, { ...w.traced, tries, errorType: last.errorType, error: last.message, waitMs, nextTryAt: view.nextTryAt, giveUpAt: view.giveUpAt });
    await wf.sleep(waitMs);
    try {
      const answer = await w.attempt();
      sink.show(w.kind, null);
      sink.emit(w.names.recovered, { ...w.traced, tries: tries + 1, waitedMs: Date.now() - since });
      return answer;
    } catch (err) {
      const cause = w.transient(err);
      if (!cause) {
        sink.show(w.kind, null);
        throw err;
      }
      last = cause;
    }
  }
}

export class ModelOutage implements ModelCalls {
  constructor(
    private readonly cfg: Pick<RunConfig, 'modelOutageMs'>,
    private readonly activities: { model: ModelActivities; modelTry: ModelActivities },
    private readonly sink: OutageSink,
  ) {}

  // Not an async function: one promise fewer on every call (the loop's note on promises, ./agent-run.ts).
  call<R>(make: (model: ModelActivities) => Promise<R>): Promise<R> {
    return make(this.activities.model).catch((err: unknown) => {
      const first = transientCause(err);
      if (!first) throw err;
      return waitOut(
        {
          kind: 'model',
          allowanceMs: this.cfg.modelOutageMs ?? DEFAULT_MODEL_OUTAGE_MS,
          allowanceField: 'modelOutageMs',
          first,
          attempt: () => make(this.activities.modelTry),
          transient: transientCause,
          view: (base) => base,
          traced: {},
          names: { waiting: 'model_waiting', recovered: 'model_recovered' },
        },
        this.sink,
      );
    });
  }
}

/** One tool call's activity: retried by Temporal, then tried one attempt at a time. */
export interface ToolCallActivities {
  retried: ToolActivity;
  oneTry: ToolActivity;
}

export class ToolOutage {
  constructor(
    private readonly cfg: Pick<RunConfig, 'toolOutageMs'>,
    private readonly sink: OutageSink,
  ) {}

  // Not an async function, as ModelOutage.call: one promise fewer on every tool call.
  call<R>(call: { toolName: string; callId: string }, activities: ToolCallActivities, make: (tool: ToolActivity) => Promise<R>): Promise<R> {
    return make(activities.retried).catch((err: unknown) => {
      const first = transientToolCause(err);
      if (!first) throw err;
      return waitOut<R, ToolOutageView>(
        {
          kind: 'tool',
          allowanceMs: this.cfg.toolOutageMs ?? DEFAULT_TOOL_OUTAGE_MS,
          allowanceField: 'toolOutageMs',
          first,
          attempt: () => make(activities.oneTry),
          transient: transientToolCause,
          view: (base) => ({ ...base, toolName: call.toolName, callId: call.callId }),
          traced: { toolName: call.toolName, callId: call.callId },
          names: { waiting: 'tool_waiting', recovered: 'tool_recovered' },
        },
        this.sink,
      );
    });
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
