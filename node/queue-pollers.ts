// Who polls a task queue, as the server's DescribeTaskQueue reports it. Shared
// by the worker (which checks the tool sets of a queue's other pollers before
// it joins: worker/tool-routing.ts) and the CLI (which says so when no worker
// would take the task its command needs: client/worker-check.ts).
//
// What "polls now" means: the server keeps each poller's lastAccessTime, the
// start of its latest poll, for about five minutes. A live worker's poll is a
// long poll the server answers empty after a minute when there is no task, and
// the worker polls again at once; so a live worker's lastAccessTime is never
// more than about 60 s old (measured on the dev server: 0 to 60 s, then back
// to 0), and a worker that stopped keeps the time of its last poll. A poller
// seen within LIVE_POLLER_MS polls now; one seen longer ago is a worker that
// stopped then. The cost of the margin: a worker that has just died counts as
// polling for up to LIVE_POLLER_MS after its last poll started.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const { TaskQueueType, TaskQueueKind } = proto.temporal.api.enums.v1;

/** A poller seen this long ago is still polling (a long poll lasts a minute; the margin covers a slow re-poll). */
export const LIVE_POLLER_MS = 75_000;

export type PolledTaskType = 'workflow' | 'activity';

export interface SeenPoller {
  identity: string;
  /** Seconds since its latest poll started. */
  secondsAgo: number;
  /** Within LIVE_POLLER_MS: it polls now. */
  live: boolean;
  /** A versioned worker's Worker Deployment and build, when it polls as one. */
  deploymentName?: string;
  buildId?: string;
}

/** Every poller the server remembers for the queue (the last ~5 minutes), live or not, one per identity per task type. */
export async function queuePollers(
  conn: Pick<Connection, 'workflowService'>,
  namespace: string,
  taskQueue: string,
  types: readonly PolledTaskType[] = ['workflow', 'activity'],
): Promise<SeenPoller[]> {
  const seen: SeenPoller[] = [];
  for (const type of types) {
    const taskQueueType = type === 'workflow' ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;
    const res = await conn.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL }, taskQueueType });
    for (const p of res.pollers ?? []) {
      const at = Number(p.lastAccessTime?.seconds ?? 0) * 1000 + Math.floor((p.lastAccessTime?.nanos ?? 0) / 1e6);
      const ageMs = Math.max(0, Date.now() - at);
      const d = p.deploymentOptions;
      seen.push({
        identity: p.identity ?? '',
        secondsAgo: Math.round(ageMs / 1000),
        live: ageMs <= LIVE_POLLER_MS,
        ...(d?.deploymentName ? { deploymentName: d.deploymentName, buildId: d.buildId ?? '' } : {}),
      });
    }
  }
  return seen;
}
