// The process-wide Temporal runtime: its logger and, when asked, a Prometheus
// endpoint that serves the SDK's own metrics (task latencies, slots, polls,
// activity and workflow outcomes) beside the harness's (workflows/loop-metrics.ts).
// One runtime per process, installed before any connection or worker.
import { makeTelemetryFilterString, Runtime, type LogLevel } from '@temporalio/worker';
import { RuntimeLogger } from './runtime-logger.js';
import { ServerWatch } from './server-watch.js';

/**
 * Installs the runtime and returns the watch that turns a server outage into
 * two lines (start it with watch(connection, address) once connected).
 * A busy metrics port is an error naming METRICS_PORT.
 */
export function installRuntime(opts: { logLevel: LogLevel; metricsAddress: string | null }): ServerWatch {
  const watch = new ServerWatch();
  try {
    Runtime.install({
      logger: new RuntimeLogger(opts.logLevel, (reason) => watch.lost(reason)),
      telemetryOptions: {
        // The core's messages go through the logger above instead of to stderr directly.
        logging: { filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }), forward: {} },
        ...(opts.metricsAddress ? { metrics: { prometheus: { bindAddress: opts.metricsAddress } } } : {}),
      },
    });
  } catch (err) {
    if (opts.metricsAddress && /address already in use/i.test(String(err))) {
      const port = opts.metricsAddress.split(':').pop();
      throw new Error(`port ${port} (Prometheus metrics, METRICS_PORT) is busy: free it, set METRICS_PORT to another port, or METRICS_PORT=off`);
    }
    throw err;
  }
  return watch;
}
