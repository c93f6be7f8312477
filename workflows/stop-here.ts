// A Stop reaches a model or tool call only through the answer to the call's
// next heartbeat, and heartbeats are rare because each one is billed
// (common/heartbeat.ts). When the call runs in the worker process that runs
// this loop (the usual case: the SDK hands a workflow's activities to its own
// worker first), this sink aborts it at once, from that process's registry
// of running calls (activities/running-calls.ts). It is not a command: no
// history changes, and a replay never calls it.
import { proxySinks, type Sinks } from '@temporalio/workflow';

export interface CallStopSinks extends Sinks {
  calls: { stop(reason: string): void };
}

const sinks = proxySinks<CallStopSinks>();

/** Call right after cancelling the scope the calls run in: the cancel requests carry the Stop to calls in other processes. */
export function stopCallsInThisProcess(reason: string): void {
  sinks.calls.stop(reason);
}
