// A run's telemetry: the harness's metrics and the OpenTelemetry spans.
//
// The harness's own metrics, exported with the SDK's through the worker's
// Prometheus endpoint (METRICS_PORT). Emitted from workflow code, which the
// SDK skips on replay, so a replayed turn is never counted twice. Counters are
// integers: money is counted in micro-dollars.
//   turns:          agent_turns{agent_model}
//   tokens:         agent_prompt_tokens, agent_completion_tokens
//   money:          agent_cost_microusd
//   tool errors:    agent_tool_errors{tool, kind="error"|"permanent"|"declined"|"stopped"}
//   approvals:      agent_approvals_requested, agent_approvals_decided{decision};
//                   waiting = requested - decided - agent_runs{status="interrupted"} ending on one
//   approval age:   agent_approval_wait_ms (histogram, when decided)
//   exits:          agent_runs{status, error_type}
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
import type { MetricCounter, MetricHistogram } from '@temporalio/common';
import { metricMeter } from '@temporalio/workflow';
export { interceptors } from '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors.js';

export interface LoopMetrics {
  turns: MetricCounter;
  promptTokens: MetricCounter;
  completionTokens: MetricCounter;
  costMicroUsd: MetricCounter;
  toolErrors: MetricCounter;
  approvalsRequested: MetricCounter;
  approvalsDecided: MetricCounter;
  approvalWaitMs: MetricHistogram;
  runs: MetricCounter;
}

/** agent_runs: runs that ended, by exit (and runs refused at start, failed with their error type). */
export function runsCounter(model: string): MetricCounter {
  return metricMeter.createCounter('agent_runs', 'run', 'Runs that ended, by exit').withTags({ agent_model: model });
}

/** Created inside the workflow (the meter is only available there). */
export function loopMetrics(model: string): LoopMetrics {
  const tags = { agent_model: model };
  return {
    turns: metricMeter.createCounter('agent_turns', 'turn', 'Model calls the loop paid for').withTags(tags),
    promptTokens: metricMeter.createCounter('agent_prompt_tokens', 'token', 'Prompt tokens, as the provider counted them').withTags(tags),
    completionTokens: metricMeter.createCounter('agent_completion_tokens', 'token', 'Completion tokens').withTags(tags),
    costMicroUsd: metricMeter.createCounter('agent_cost_microusd', 'microusd', 'Spend in millionths of a dollar').withTags(tags),
    toolErrors: metricMeter.createCounter('agent_tool_errors', 'call', 'Tool calls that failed, were declined or were stopped').withTags(tags),
    approvalsRequested: metricMeter.createCounter('agent_approvals_requested', 'call', 'Calls put to a person').withTags(tags),
    approvalsDecided: metricMeter.createCounter('agent_approvals_decided', 'call', 'Decisions taken').withTags(tags),
    approvalWaitMs: metricMeter.createHistogram('agent_approval_wait_ms', 'int', 'ms', 'How long a person took to decide').withTags(tags),
    runs: runsCounter(model),
  };
}
