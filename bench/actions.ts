// What a run costs the server, read from its history: the events it wrote and
// the Temporal Cloud Actions they bill, by Cloud's rules (docs.temporal.io
// "Temporal Cloud Actions"): a workflow started, an activity scheduled or
// retried, the markers of one workflow task (its local activities, and
// patches) as one, a signal, an update, a timer, a search-attribute upsert
// (not the SDK's `TemporalChangeVersion` ones, which are exempt), a child
// workflow (two: its start and its execution). Heartbeats and queries are
// Actions too but leave no event: heartbeats come from the server's metrics
// (./server-metrics.ts).
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
  /** Local activities (their markers). */
  localActivities: number;
  /** Workflow tasks that recorded any marker (local activities, patches): one Action each. */
  tasksWithMarkers: number;
  signals: number;
  updates: number;
  timers: number;
  upserts: number;
  /** Of the upserts, the SDK's own `TemporalChangeVersion` upserts that go with a patch marker (not billed). */
  patchUpserts: number;
  children: number;
  /** Patch markers (`patched()` asked in a run that is not replaying). */
  patchMarkers: number;
  /** The billed Actions these events stand for. */
  actions: number;
}

export function countActions(histories: History | History[]): ActionCount {
  const c: ActionCount = {
    events: 0,
    starts: 0,
    activitiesScheduled: 0,
    activityRetries: 0,
    localActivities: 0,
    tasksWithMarkers: 0,
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
    let taskHadMarker = false;
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
          taskHadMarker = false;
          break;
        case T.EVENT_TYPE_MARKER_RECORDED: {
          const name = e.markerRecordedEventAttributes?.markerName;
          if (name === 'core_local_activity') c.localActivities += 1;
          else if (name === 'core_patch') c.patchMarkers += 1;
          if (!taskHadMarker) c.tasksWithMarkers += 1;
          taskHadMarker = true;
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
  c.actions = c.starts + c.activitiesScheduled + c.activityRetries + c.tasksWithMarkers + c.signals + c.updates + c.timers + (c.upserts - c.patchUpserts) + 2 * c.children;
  return c;
}

/** One line of the breakdown, e.g. `41 events: 1 start, 6 activities, …`. */
export function describeActions(c: ActionCount): string {
  const parts = [
    `${c.starts} start`,
    `${c.activitiesScheduled} activities`,
    ...(c.activityRetries ? [`${c.activityRetries} retries`] : []),
    `${c.tasksWithMarkers} tasks with markers (${c.localActivities} local activities, ${c.patchMarkers} patches)`,
    ...(c.signals ? [`${c.signals} signals`] : []),
    ...(c.updates ? [`${c.updates} updates`] : []),
    ...(c.timers ? [`${c.timers} timers`] : []),
    `${c.upserts - c.patchUpserts} upserts (+${c.patchUpserts} exempt, for patches)`,
    ...(c.children ? [`${c.children} children`] : []),
  ];
  return `${c.actions} Actions (${parts.join(', ')}); ${c.events} events`;
}
