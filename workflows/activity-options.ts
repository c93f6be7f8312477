// How the loop calls its activities: timeouts, retries, heartbeats and what a
// Stop does to a call already running. Every call waits for the activity to
// acknowledge a cancellation (WAIT_CANCELLATION_COMPLETED): the SDK documents
// that as the default, but a call that leaves the option unset sends the
// protocol's zero value, TRY_CANCEL, and then a run can close while its tool
// still runs — a write landing unreported, a model reply billed but never
// counted, a progress line after the Stop. Waiting costs at most one
// heartbeat interval (25 ms for tools) per Stop.
import * as wf from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunConfig } from './types';

/**
 * Guards the switch to waiting: histories recorded before it sent TRY_CANCEL,
 * and their runs closed without the activity's acknowledgement.
 */
export const WAIT_CANCELLATION_PATCH = 'wait-cancellation-v1';

export interface LoopActivities {
  /** The model call: long, retried on 429/5xx, heartbeats while it waits. */
  model: wf.ActivityInterfaceFor<Activities>;
  /** Tools that run as activities: writes, slow tools. */
  tools: wf.ActivityInterfaceFor<Activities>;
  /** Fast read-only tools: local activities, no server round trip of their own. */
  localTools: wf.LocalActivityInterfaceFor<Activities>;
}

/** `waitForCancellation`: the value of patched(WAIT_CANCELLATION_PATCH), asked in the run's first activation. */
export function loopActivities(cfg: RunConfig, waitForCancellation: boolean): LoopActivities {
  const WAIT = waitForCancellation ? wf.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED : wf.ActivityCancellationType.TRY_CANCEL;
  const toolRetry = { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 5 } as const;
  return {
    model: wf.proxyActivities<Activities>({
      startToCloseTimeout: cfg.modelTimeoutMs,
      heartbeatTimeout: '10s',
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 6 },
      cancellationType: WAIT,
    }),
    tools: wf.proxyActivities<Activities>({
      startToCloseTimeout: cfg.toolTimeoutMs,
      // Short, so a tool on a dead worker is retried quickly; the tool
      // heartbeats far more often than this.
      heartbeatTimeout: '5s',
      retry: toolRetry,
      cancellationType: WAIT,
    }),
    localTools: wf.proxyLocalActivities<Activities>({
      startToCloseTimeout: cfg.toolTimeoutMs,
      retry: toolRetry,
      cancellationType: WAIT,
    }),
  };
}
