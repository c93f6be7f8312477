// OpenTelemetry tracing for a process (worker, CLI, `npm start`): spans to any
// OTLP/HTTP collector, when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set
// (node/config.ts). Off otherwise: nothing is installed, nothing exported.
// The spans themselves come from @temporalio/interceptors-opentelemetry: the
// client's (StartWorkflow, signals, queries), the workflow's (RunWorkflow,
// StartActivity, made in the sandbox and handed out through a sink) and the
// activities' (RunActivity), linked through the `_tracer-data` header.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource, envDetectorSync } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from './config.js';

/** Where a process sends its OpenTelemetry spans (startTracing makes one from the OTEL_* settings). */
export interface Tracing {
  resource: Resource;
  /** Where the workflow's spans (from the sink) go too. */
  spanProcessor: SpanProcessor;
  endpoint: string;
}

/** The attribute that carries the run's id (its workflow id) on every span: the package's own name for it. */
export const RUN_ID_ATTRIBUTE = 'temporalWorkflowId';

let installed: { tracing: Tracing; provider: BasicTracerProvider } | null = null;

/**
 * Installs the process's tracer provider (once: `npm start` runs a worker and
 * a client in one process) and returns what the worker's sink needs, or null
 * when tracing is off. `serviceName` is the default for OTEL_SERVICE_NAME.
 */
export function startTracing(cfg: TracingConfig | null, serviceName: string): Tracing | null {
  if (!cfg) return null;
  if (installed) return installed.tracing;
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name.
  const resource = Resource.default().merge(new Resource({ 'service.name': serviceName })).merge(envDetectorSync.detect());
  // The batch processor reads OTEL_BSP_SCHEDULE_DELAY (default 5 s) and the other OTEL_BSP_* variables.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: cfg.endpoint }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // Context across awaits (the activity's span is the parent of what it does)
  // and the W3C propagator the interceptors inject into Temporal headers.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  installed = { tracing: { resource, spanProcessor, endpoint: cfg.endpoint }, provider };
  return installed.tracing;
}

/** Sends what is still batched (a CLI exits right after its command). Safe when tracing is off. */
export async function stopTracing(): Promise<void> {
  if (!installed) return;
  const { provider } = installed;
  installed = null;
  await provider.shutdown().catch((err: unknown) => console.warn(`tracing: could not flush spans (${String(err)})`));
  trace.disable();
  context.disable();
  propagation.disable();
}
