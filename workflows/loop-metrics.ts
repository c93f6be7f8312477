// A run's metrics.
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
// Kept apart from ./telemetry.ts (the OpenTelemetry interceptor module): the
// SDK evaluates a workflow's modules again for every run it starts, and the
// OpenTelemetry packages cost each run ~3 ms of module evaluation, paid only
// when tracing bundles ./telemetry.ts.
import type { MetricCounter, MetricHistogram } from '@temporalio/common';
import { metricMeter } from '@temporalio/workflow';

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
