// Notifications of a run parked on a person (docs/operations.md,
// "Notifications"): when the run parks on an approval, a budget raise or a
// reconciliation, and when an approval passes limits.approvalEscalateAfterMs,
// it schedules the notifyParked activity (activities/notify.ts) once per
// route that takes the event, without waiting for it: the run parks at once
// whatever the receiver does. Temporal retries the activity until the
// receiver answers 2xx; a replay never sends it again (it is in history).
// When the parking ends (a decision, a raise, a timeout, a Stop), what is
// still pending (a delivery being retried, the escalation timer) is
// cancelled: the event is over, and a receiver that never answers cannot keep
// a decided run's activity retrying forever.
//
// Nothing is scheduled unless the worker that started the run had routes
// (RunConfig.notify, recorded at start): a run without them records exactly
// what it did before notifications existed.
import * as wf from '@temporalio/workflow';
import type { AgentActivities as Activities, NotifyInput } from '../common/activity-contract.js';
import type { NotifyEvent, NotifyPlan, RunConfig } from '../common/contract.js';
import type { RunIds } from './run-context.js';
import type { RunTrace } from './trace.js';

/** What a parking tells the notifier. */
export interface Parking {
  event: Exclude<NotifyEvent, 'approval_escalated'>;
  callId: string | null;
  toolName: string | null;
  argsHash: string | null;
  /** Sent only when the run's payloads are not encrypted. */
  args?: unknown;
  /** How long the parking waits by itself (approvalTimeoutMs, budgetTimeoutMs); null: forever. */
  timeoutMs: number | null;
  /** An approval: limits.approvalEscalateAfterMs. */
  escalateAfterMs?: number;
}

/** Ends a parking's notifications. */
export type EndParking = () => void;

const NOTHING: EndParking = () => undefined;

/**
 * Each attempt is short (the activity gives a receiver 10 s to answer), so a
 * worker that died mid-delivery is noticed quickly and the delivery retried
 * elsewhere. Attempts are unlimited (no maximumAttempts): the contract says
 * retried until the receiver takes it; the backoff keeps a dead receiver
 * from being hammered (1 s, doubling, at most a minute apart). TRY_CANCEL:
 * ending the parking does not wait for a receiver that hangs.
 */
const DELIVERY = {
  startToCloseTimeout: '15s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s' },
  cancellationType: wf.ActivityCancellationType.TRY_CANCEL,
} as const;

/** A notification that ended without a 2xx: cancelled with its parking (expected), or anything else, which the worker's log says. */
function notDelivered(err: unknown): void {
  if (wf.isCancellation(err)) return;
  wf.log.warn('notification not delivered', { error: String(err) });
}

/** Whether a route takes this event for this tool (a budget parking names no tool: only routes without a tool filter take it). */
export function routeTakes(route: NotifyPlan['routes'][number], event: NotifyEvent, toolName: string | null): boolean {
  if (route.events && !route.events.includes(event)) return false;
  if (route.tools && (toolName === null || !route.tools.includes(toolName))) return false;
  return true;
}

export class Notifier {
  private readonly act = wf.proxyActivities<Activities>(DELIVERY);

  constructor(
    private readonly ids: RunIds,
    private readonly cfg: RunConfig,
    private readonly trace: RunTrace,
  ) {}

  /**
   * Announces a parking whose trace line was just written; the answer ends
   * its notifications (call it however the parking ends). The
   * Idempotency-Key names the run chain, the parking (the seq of its trace
   * line: unique in the chain, the same on every replay) and the event.
   */
  parked(p: Parking): EndParking {
    const plan = this.cfg.notify;
    if (!plan || !plan.routes.some((r) => routeTakes(r, p.event, p.toolName) || (p.escalateAfterMs !== undefined && routeTakes(r, 'approval_escalated', p.toolName)))) return NOTHING;
    const parkingSeq = this.trace.seq;
    const now = Date.now();
    const base: Omit<NotifyInput, 'route' | 'event' | 'idempotencyKey'> = {
      workflowId: this.ids.workflowId,
      callId: p.callId,
      toolName: p.toolName,
      argsHash: p.argsHash,
      expiresAt: p.timeoutMs === null ? null : new Date(now + p.timeoutMs).toISOString(),
      parkedAt: new Date(now).toISOString(),
      // Encrypted payloads: the arguments never reach the activity's input, so no worker can send them.
      ...(p.args !== undefined && this.cfg.payloadsEncrypted !== true ? { args: p.args } : {}),
    };
    const scope = new wf.CancellationScope();
    const send = (event: NotifyEvent) => {
      const idempotencyKey = `${this.ids.workflowId}@${this.ids.chainId}/${parkingSeq}/${event}`;
      plan.routes.forEach((r, route) => {
        if (!routeTakes(r, event, p.toolName)) return;
        // Not awaited: the run is parked already. Cancelled (the parking ended) or failed, it is over: the rejection is expected.
        scope.run(() => this.act.notifyParked({ ...base, route, event, idempotencyKey })).catch(notDelivered);
      });
    };
    send(p.event);
    const escalateAfterMs = p.escalateAfterMs;
    if (escalateAfterMs !== undefined && plan.routes.some((r) => routeTakes(r, 'approval_escalated', p.toolName))) {
      scope
        .run(async () => {
          await wf.sleep(escalateAfterMs);
          this.trace.emit('approval_escalated', { callId: p.callId, toolName: p.toolName, afterMs: escalateAfterMs });
          send('approval_escalated');
        })
        .catch(notDelivered);
    }
    return () => scope.cancel();
  }
}
