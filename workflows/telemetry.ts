// The workflow's OpenTelemetry spans (bundled only when tracing is on:
// worker/workflows-path.ts).
//
// The workflow-side OpenTelemetry interceptors, bundled with the workflow code
// (bundleWorkflowCode's workflowInterceptorModules; Worker.create's
// interceptors.workflowModules): a RunWorkflow span per run and a
// StartActivity span per model call and tool call, parented to the client's
// StartWorkflow span when the start carried one, and the span context passed
// on to each activity in its `_tracer-data` header. They add no command (a
// header on the activity's schedule command is not compared on replay) and
// read only workflow time, so replay is unchanged. The spans leave the
// sandbox through the `exporter` sink: the worker registers it always, as a
// no-op when tracing is off (worker/sinks.ts, added by worker/agent-plugin.ts).
// The path carries `.js` because the package has no `exports` map: plain
// Node ESM resolves a deep import only by its file name.
export { interceptors } from '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors.js';
