// The process-wide Temporal runtime: its logger and, when asked, a Prometheus
// endpoint that serves the SDK's own metrics (task latencies, slots, polls,
// activity and workflow outcomes) beside the harness's (workflows/metrics.ts).
// One runtime per process, installed before any connection or worker.
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

export function installRuntime(opts: { logLevel: LogLevel; metricsAddress: string | null }): void {
  Runtime.install({
    logger: new DefaultLogger(opts.logLevel),
    ...(opts.metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: opts.metricsAddress } } } } : {}),
  });
}
