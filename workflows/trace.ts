// The workflow's side of the trace. Workflow code cannot do I/O, so events go
// out through a sink, which the worker skips during replay: a sink call is not
// a command, so an event is written once however often the workflow replays.
// A workflow task that is retried after a crash runs its sink calls again, so
// every event carries the per-chain `seq` (carried across continue-as-new);
// the writer drops a `seq` it already has.
import type { RunStream } from './run-stream.js';
import { proxySinks, type Sinks } from '@temporalio/workflow';

export type TraceEventType =
  | 'run_started'
  | 'continued_as_new'
  | 'turn'
  | 'tool_start'
  | 'tool_progress'
  | 'tool_result'
  | 'approval_required'
  | 'approval_decided'
  | 'approval_escalated'
  | 'reconciliation_required'
  | 'reconciliation_decided'
  | 'signal_ignored'
  | 'context_elided'
  | 'context_summarized'
  | 'stop_prevailed'
  | 'steer_queued'
  | 'steered'
  | 'steer_dropped'
  | 'budget_awaited'
  | 'budget_raised'
  | 'budget_exhausted'
  | 'usage_over_reservation'
  | 'model_waiting'
  | 'model_recovered'
  | 'tool_waiting'
  | 'tool_recovered'
  | 'output_invalid'
  | 'run_stopped';

export interface TraceEvent {
  seq: number;
  type: TraceEventType;
  [field: string]: unknown;
}

export interface TraceSinks extends Sinks {
  /** chainId: the run chain's file to write to (RunIds.chainId, set in ./start.ts); absent from bundles before it: the first execution's run id. */
  trace: { event(event: TraceEvent, chainId?: string): void };
}

export const traceSinks = proxySinks<TraceSinks>();

/** The run's trace: each event numbered by the chain's seq and handed to the worker's trace sink, which writes the JSONL file. */
export class RunTrace {
  constructor(
    /** Names the trace file (see RunIds.chainId). */
    private readonly chainId: string,
    /** The last event's seq: carried across continue-as-new, so a chain's lines number 1..n. */
    public seq: number,
    /** Every event is published on the run's live stream too: workflow state, which a replay rebuilds. */
    private readonly stream?: RunStream,
  ) {}

  emit(type: TraceEventType, fields: Record<string, unknown>): void {
    this.seq += 1;
    const event: TraceEvent = { seq: this.seq, type, ...fields };
    traceSinks.trace.event(event, this.chainId);
    this.stream?.publish(event);
  }
}
