// What a run costs the server, read from its history: the events it wrote and
// the Temporal Cloud Actions they bill (a workflow started, an activity
// scheduled or retried, a local activity, a signal, an update, a timer, a
// search-attribute upsert, a child workflow). Heartbeats are Actions too, but
// leave no event: they come from the server's metrics (./server-metrics.ts).
import proto from '@temporalio/proto';

type History = proto.temporal.api.history.v1.IHistory;
const T = proto.temporal.api.enums.v1.EventType;

export interface ActionCount {
  /** Every event of the history. */
  events: number;
  /** Workflow starts: the client's start, or the continue-as-new that began this execution. */
  starts: number;
  activitiesScheduled: number;
  /** Attempts after the first, as the started events record them (an attempt that timed out leaves no event of its own). */
  activityRetries: number;
  /** Local activities (their markers): the upper bound of what Cloud bills, one Action per workflow task that runs any. */
  localActivities: number;
  /** Workflow tasks that ran at least one local activity: what Cloud bills for them. */
  tasksWithLocalActivities: number;
  signals: number;
  updates: number;
  timers: number;
  upserts: number;
  /** Of the upserts, the SDK's own `TemporalChangeVersion` upserts that go with a patch marker. */
  patchUpserts: number;
  children: number;
  /** Patch markers (`patched()` asked in a run that is not replaying). */
  patchMarkers: number;
  /** Everything above that bills, local activities counted per marker. */
  actions: number;
}

export function countActions(histories: History | History[]): ActionCount {
  const c: ActionCount = {
    events: 0,
    starts: 0,
    activitiesScheduled: 0,
    activityRetries: 0,
    localActivities: 0,
    tasksWithLocalActivities: 0,
    signals: 0,
    updates: 0,
    timers: 0,
    upserts: 0,
    patchUpserts: 0,
    children: 0,
    patchMarkers: 0,
    actions: 0,
  };
  for (const history of Array.isArray(histories) ? histories : [histories]) {
    // Markers follow the WorkflowTaskCompleted of the task that recorded them.
    let taskHadLocalActivity = false;
    for (const e of history.events ?? []) {
      c.events += 1;
      switch (e.eventType) {
        case T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
          c.starts += 1;
          break;
        case T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
          c.activitiesScheduled += 1;
          break;
        case T.EVENT_TYPE_ACTIVITY_TASK_STARTED:
          c.activityRetries += Math.max(0, (e.activityTaskStartedEventAttributes?.attempt ?? 1) - 1);
          break;
        case T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
          taskHadLocalActivity = false;
          break;
        case T.EVENT_TYPE_MARKER_RECORDED: {
          const name = e.markerRecordedEventAttributes?.markerName;
          if (name === 'core_local_activity') {
            c.localActivities += 1;
            if (!taskHadLocalActivity) c.tasksWithLocalActivities += 1;
            taskHadLocalActivity = true;
          } else if (name === 'core_patch') c.patchMarkers += 1;
          break;
        }
        case T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
          c.signals += 1;
          break;
        case T.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
          c.updates += 1;
          break;
        case T.EVENT_TYPE_TIMER_STARTED:
          c.timers += 1;
          break;
        case T.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
          c.upserts += 1;
          const fields = Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {});
          if (fields.length === 1 && fields[0] === 'TemporalChangeVersion') c.patchUpserts += 1;
          break;
        }
        case T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
          c.children += 1;
          break;
        default:
          break;
      }
    }
  }
  c.actions = c.starts + c.activitiesScheduled + c.activityRetries + c.localActivities + c.signals + c.updates + c.timers + c.upserts + c.children;
  return c;
}

/** One line of the breakdown, e.g. `41 events: 1 start, 6 activities, …`. */
export function describeActions(c: ActionCount): string {
  const parts = [
    `${c.starts} start`,
    `${c.activitiesScheduled} activities`,
    ...(c.activityRetries ? [`${c.activityRetries} retries`] : []),
    `${c.localActivities} local activities`,
    ...(c.signals ? [`${c.signals} signals`] : []),
    ...(c.updates ? [`${c.updates} updates`] : []),
    ...(c.timers ? [`${c.timers} timers`] : []),
    `${c.upserts} upserts (${c.patchUpserts} of them for patches)`,
    ...(c.children ? [`${c.children} children`] : []),
  ];
  return `${c.actions} Actions (${parts.join(', ')}); ${c.events} events, ${c.patchMarkers} patch markers`;
}
