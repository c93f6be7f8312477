// What a run's live stream carries on topic `events` (workflows/run-stream.ts
// publishes the trace events, activities/live-stream.ts the model's text and
// tool progress), as a subscriber reads it: each item with its offset in the
// run's stream, which keeps counting across continue-as-new.

/** A trace event as the workflow emitted it: `type` and `seq` as in the trace file. */
export interface StreamTraceEvent {
  /** The event: `turn`, `tool_start`, `tool_result`, `run_stopped`, … */
  type: string;
  /** Its sequence number in the run's trace. */
  seq: number;
  /** The event's own fields, as in the trace. */
  [field: string]: unknown;
}

/**
 * Reply text of one model attempt as it arrived. The texts of a turn's
 * counted attempt concatenate to that turn's reply text; an attempt that
 * failed (and was retried) is told by its `attempt` and its token_end.
 */
export interface StreamTokenText {
  /** Always `token`. */
  type: 'token';
  /** The model turn (1-based). */
  turn: number;
  /** Temporal's activity attempt (1 for the first try). */
  attempt: number;
  /** The text that arrived, in order. */
  text: string;
}

/** The end of one model attempt's text: `counted` is the turn's reply, `failed` is dropped (a retry follows or the run fails), `stopped` was cut short by a Stop. */
export interface StreamTokenEnd {
  /** Always `token_end`. */
  type: 'token_end';
  /** The model turn (1-based). */
  turn: number;
  /** Temporal's activity attempt. */
  attempt: number;
  /** What came of the attempt's text. */
  outcome: 'counted' | 'failed' | 'stopped';
}

/** What a run publishes on its stream: a trace event, reply text, or the end of an attempt's text. */
export type StreamEvent = StreamTraceEvent | StreamTokenText | StreamTokenEnd;

/** One item read from a run's stream. */
export type RunStreamItem = StreamEvent & { offset: number };

/**
 * Items a reader cannot be given (offsets `from` to `to`, both included):
 * said in their place, never skipped in silence. `offset` is `to`, so "the
 * last item's offset plus one" still names where to read on.
 */
export interface StreamGap {
  /** Always `gap`. */
  type: 'gap';
  /** The first offset missing. */
  from: number;
  /** The last offset missing. */
  to: number;
  /** Equals `to`. */
  offset: number;
  /** Why they cannot be had. */
  reason: string;
}

/** What AgentClient's events() yields: the run's items, and a gap where some truly cannot be had. */
export type RunEventItem = RunStreamItem | StreamGap;

/**
 * The stream's items from an offset (the streamItems query), as the execution
 * that answers holds them: `end` is the offset the next item will have.
 * `start` (the first offset this execution holds), `runId` and `firstRunId`
 * tell a reader behind it where to read the older items: an earlier
 * execution of the chain, which a worker replays from its history to answer.
 */
export interface StreamWindow {
  /** The items from the offset asked for, in order (at most a page). */
  items: RunStreamItem[];
  /** The offset the next item will have. */
  end: number;
  /** The first offset the answering execution holds. */
  start: number;
  /** The answering execution's run id. */
  runId: string;
  /** The run id of the chain's first execution. */
  firstRunId: string;
}

/** At most this many items in one streamItems answer (a query's answer is one gRPC message: 4 MiB at most). */
export const STREAM_PAGE_ITEMS = 500;
/** At most about this many bytes of items in one streamItems answer (JSON, estimated). */
export const STREAM_PAGE_BYTES = 1_000_000;

/** The item is a gap: offsets that cannot be had. */
export function isGap(e: RunEventItem): e is StreamGap {
  return e.type === 'gap';
}

/**
 * A trace event the workflow emitted: not a token or a token's end, nor a
 * line an activity wrote (tool progress, a model attempt's failure, an effect
 * note), which carries the `step` of the call it belongs to.
 */
export function isTraceEvent(e: StreamEvent | StreamGap): e is StreamTraceEvent {
  return e.type !== 'token' && e.type !== 'token_end' && e.type !== 'gap' && !('step' in e);
}

/** The item is reply text. */
export function isTokenText(e: StreamEvent | StreamGap): e is StreamTokenText {
  return e.type === 'token';
}

/** The item ends one attempt's reply text. */
export function isTokenEnd(e: StreamEvent | StreamGap): e is StreamTokenEnd {
  return e.type === 'token_end';
}
