// The run's trace: each event numbered by a per-chain seq (carried across
// continue-as-new) and handed to the worker's trace sink, which writes the
// JSONL file. A sink call is not a command, and a replay does not call it:
// an event is written once however often the workflow replays.
import { traceSinks, type TraceEventType } from './trace.js';

export class RunTrace {
  constructor(
    /** Names the trace file (see RunIds.chainId). */
    private readonly chainId: string,
    /** The last event's seq: carried across continue-as-new, so a chain's lines number 1..n. */
    public seq: number,
  ) {}

  emit(type: TraceEventType, fields: Record<string, unknown>): void {
    this.seq += 1;
    traceSinks.trace.event({ seq: this.seq, type, ...fields }, this.chainId);
  }
}
