// The sinks the `agentRun` workflow calls: the trace (its JSONL lines), the
// Stop of its calls running in this process, and the exporter of its
// OpenTelemetry spans. Sink calls are not commands: a replay never depends on
// them, and on replay they do nothing.
import type { InjectedSink, InjectedSinks } from '@temporalio/worker';
import { makeWorkflowExporter, type OpenTelemetrySinks, type OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { RUN_ID_ATTRIBUTE } from '../node/tracing.js';
import type { TraceWrite, TraceWriter } from '../activities/trace-file.js';
import type { RunningCalls } from '../activities/running-calls.js';
import type { TraceSinks } from '../workflows/trace.js';
import type { CallStopSinks } from '../workflows/stop.js';
import type { PluginTracing } from './plugin-options.js';

export type HarnessSinks = TraceSinks & CallStopSinks & OpenTelemetrySinks;

/** The sink names the harness's workflows call. */
export const HARNESS_SINK_NAMES = ['trace', 'calls'] as const;

/** The `exporter` sink of a bundle whose tracing interceptors have nowhere to send spans (tracing off; replay). */
export const NO_WORKFLOW_SPANS: InjectedSinks<OpenTelemetrySinks> = { exporter: { export: { fn: () => {} } } };

/** Every sink the workflows call, doing nothing: for replaying histories (a replay never writes a trace or stops a call). */
export const REPLAY_SINKS: InjectedSinks<HarnessSinks> = {
  ...NO_WORKFLOW_SPANS,
  trace: { event: { fn: () => {} } },
  calls: { stop: { fn: () => {} } },
};

/** The trace and Stop sinks of a worker that writes to `trace` and runs `calls`. */
export function harnessSinks(trace: TraceWriter, calls: RunningCalls): InjectedSinks<TraceSinks & CallStopSinks> {
  const batch = new TraceBatch(trace);
  return {
    trace: {
      event: {
        // Called during replay too, but then it only fills a line that is
        // missing. Replayed events are normally on disk already; yet Temporal's
        // core can flag as "replaying" an activation this worker never ran
        // before (the local activity's result in a workflow task retried after
        // a timeout), and that line would otherwise be lost for good.
        fn: (info, event, chainId) => batch.add(info.workflowId, chainId ?? info.firstExecutionRunId, { event, onlyIfMissing: info.unsafe.isReplayingHistoryEvents }),
        callDuringReplay: true,
      },
    },
    // A Stop taken by a loop in this process aborts its calls running here at
    // once. Never on replay: then the calls it stopped are long gone.
    calls: {
      stop: { fn: (info, reason) => void calls.stopRun(info.workflowId, info.runId, reason), callDuringReplay: false },
    },
  };
}

/**
 * The package's sink for the workflow's spans, which also puts the run's id
 * under the attribute the client's and the activities' spans carry it in
 * (the package sets only `workflowId`, among all of WorkflowInfo, on these).
 */
export function workflowSpanSink(tracing: PluginTracing): InjectedSink<OpenTelemetryWorkflowExporter> {
  // The package copies all of WorkflowInfo onto each span; the nested parts
  // (memo, search attributes, retry policy...) are dropped: they can be large
  // and say nothing the scalar ones (workflowId, runId, taskQueue, attempt,
  // historyLength...) do not.
  const scalarsOnly: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => {
      for (const [k, v] of Object.entries(span.attributes)) if (typeof v === 'object' && v !== null && !Array.isArray(v)) delete span.attributes[k];
      tracing.spanProcessor.onEnd(span);
    },
    forceFlush: () => tracing.spanProcessor.forceFlush(),
    shutdown: async () => {},
  };
  const sink = makeWorkflowExporter(scalarsOnly, tracing.resource);
  return {
    export: {
      fn: (info, spans) => {
        for (const span of spans) span.attributes[RUN_ID_ATTRIBUTE] = info.workflowId;
        void sink.export.fn(info, spans);
      },
    },
  };
}

/**
 * The trace lines of the sink calls made together, written together: the SDK
 * hands a workflow task's sink calls over one after another in the same tick,
 * and waits for what each returns before it sends the task's completion. So
 * the lines of one trace are gathered until the tick's end and written by one
 * TraceWriter.writeAll (one lock, one append), and every call's promise
 * settles when they are on disk: the completion still goes out after its
 * lines, as when each was written alone, at a third of the file operations
 * for a turn's three lines.
 */
export class TraceBatch {
  private readonly pending = new Map<string, { entries: TraceWrite[]; written: Promise<void> }>();

  constructor(private readonly trace: TraceWriter) {}

  add(workflowId: string, chainId: string, entry: TraceWrite): Promise<void> {
    const key = `${workflowId}\u0000${chainId}`;
    let batch = this.pending.get(key);
    if (batch === undefined) {
      const entries: TraceWrite[] = [];
      const written = Promise.resolve().then(() => {
        // A call after this point starts a batch of its own, written after this one.
        this.pending.delete(key);
        this.trace.writeAll(workflowId, chainId, entries);
      });
      batch = { entries, written };
      this.pending.set(key, batch);
    }
    batch.entries.push(entry);
    return batch.written;
  }
}
