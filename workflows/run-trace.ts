// The run's trace: each event numbered by a per-chain seq (carried across
// continue-as-new) and handed to the worker's trace sink, which writes the
// JSONL file. A sink call is not a command, and a replay does not call it:
// an event is written once however often the workflow replays. Each event is
// also published on the run's live stream (./run-stream.ts), which is
// workflow state: a replay rebuilds it.
import type { RunStream } from './run-stream.js';
import { traceSinks, type TraceEvent, type TraceEventType } from './trace.js';

export class RunTrace {
  constructor(
    /** Names the trace file (see RunIds.chainId). */
    private readonly chainId: string,
    /** The last event's seq: carried across continue-as-new, so a chain's lines number 1..n. */
    public seq: number,
    private readonly stream?: RunStream,
  ) {}

  emit(type: TraceEventType, fields: Record<string, unknown>): void {
    this.seq += 1;
    const event: TraceEvent = { seq: this.seq, type, ...fields };
    traceSinks.trace.event(event, this.chainId);
    this.stream?.publish(event);
  }
}
