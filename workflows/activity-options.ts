// How the loop calls its activities: timeouts, retries, heartbeats and what a
// Stop does to a call already running. Every call waits for the activity to
// acknowledge a cancellation (WAIT_CANCELLATION_COMPLETED): the SDK documents
// that as the default, but a call that leaves the option unset sends the
// protocol's zero value, TRY_CANCEL, and then a run can close while its tool
// still runs — a write landing unreported, a model reply billed but never
// counted, a progress line after the Stop. Waiting costs nothing when the call
// runs in the loop's own process (the Stop aborts it there at once:
// ./stop.ts) and at most one heartbeat interval (5 s by default) when it
// runs in another.
import * as wf from '@temporalio/workflow';
import type { AgentActivities as Activities } from '../common/activity-contract.js';
import type { ToolSpec } from '../common/tool-spec.js';
import type { RunConfig } from '../common/contract.js';


export interface LoopActivities {
  /** The model call: long, retried on 429/5xx, heartbeats while it waits. */
  model: wf.ActivityInterfaceFor<Activities>;
  /** The same call as one attempt: each try after a timer while the run waits out an outage (./outage-wait.ts). */
  modelTry: wf.ActivityInterfaceFor<Activities>;
  /** The tool activity for one tool, with the options its spec asks for (built once per tool). */
  tool(spec: ToolSpec, asLocal: boolean): ToolActivity;
  /** The same as one attempt: each try after a timer while the call waits out an outage (./outage-wait.ts). */
  toolTry(spec: ToolSpec, asLocal: boolean): ToolActivity;
}

export type ToolActivity = Pick<wf.ActivityInterfaceFor<Activities>, 'runTool'>;

/**
 * How long a call may go without a heartbeat before Temporal retries it
 * elsewhere (its worker died), when the run's configuration does not say (a
 * configuration parsed without a worker's resolveConfig): twice the default
 * heartbeat interval (5 s, node/heartbeat.ts). Calls heartbeat at least
 * every half of it.
 */
export const HEARTBEAT_TIMEOUT_MS = 10_000;

const CANCELLATION = {
  wait: wf.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  try: wf.ActivityCancellationType.TRY_CANCEL,
  abandon: wf.ActivityCancellationType.ABANDON,
} as const;

export function loopActivities(cfg: RunConfig): LoopActivities {
  const byTool = new Map<string, ToolActivity>();
  const proxyOf = (spec: ToolSpec, asLocal: boolean, oneTry: boolean): ToolActivity => {
    const key = `${spec.name}|${asLocal}|${oneTry}`;
    let proxy = byTool.get(key);
    if (!proxy) {
      proxy = toolProxy(cfg, spec, asLocal, oneTry);
      byTool.set(key, proxy);
    }
    return proxy;
  };
  const modelOptions = {
    startToCloseTimeout: cfg.modelTimeoutMs,
    heartbeatTimeout: cfg.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS,
    cancellationType: CANCELLATION.wait,
  };
  return {
    model: wf.proxyActivities<Activities>({ ...modelOptions, retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 6 } }),
    // The wait between tries is the workflow's timer, which the status can show and a Stop can cut short.
    modelTry: wf.proxyActivities<Activities>({ ...modelOptions, retry: { maximumAttempts: 1 } }),
    tool: (spec, asLocal) => proxyOf(spec, asLocal, false),
    toolTry: (spec, asLocal) => proxyOf(spec, asLocal, true),
  };
}

function toolProxy(cfg: RunConfig, spec: ToolSpec, asLocal: boolean, oneTry: boolean): ToolActivity {
  const o = spec.activity ?? {};
  const r = o.retry ?? {};
  const retry = {
    initialInterval: r.initialIntervalMs ?? 500,
    backoffCoefficient: r.backoffCoefficient ?? 2,
    maximumInterval: r.maximumIntervalMs ?? 10_000,
    maximumAttempts: oneTry ? 1 : (r.maximumAttempts ?? 5),
  };
  // Waits for the tool's acknowledgement unless its spec asks otherwise (see the top of this file).
  const cancellationType = CANCELLATION[o.cancellation ?? 'wait'];
  const startToCloseTimeout = o.startToCloseTimeoutMs ?? cfg.toolTimeoutMs;
  if (asLocal) return wf.proxyLocalActivities<Activities>({ startToCloseTimeout, retry, cancellationType });
  // Short, so a tool on a dead worker is retried quickly.
  return wf.proxyActivities<Activities>({ startToCloseTimeout, heartbeatTimeout: o.heartbeatTimeoutMs ?? cfg.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS, retry, cancellationType });
}
