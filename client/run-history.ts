// Reads a run's history: every execution of its chain, bytes per turn the way
// the size limits see them, and the model calls' decoded inputs.
import type { Client, WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { CallModelInput } from '../common/activity-contract.js';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const EventType = proto.temporal.api.enums.v1.EventType;
const HistoryEventMessage = proto.temporal.api.history.v1.HistoryEvent;

/** The model call's activity type. */
const MODEL_ACTIVITIES = ['callModel'];

const isModelCall = (e: HistoryEvent): boolean =>
  e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && MODEL_ACTIVITIES.includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '');

/**
 * History bytes per turn: the encoded size of every event from one model
 * call's scheduling to the next one's (the last turn runs to the end).
 */
export function bytesPerTurn(events: HistoryEvent[]): number[] {
  const out: number[] = [];
  for (const e of events) {
    if (isModelCall(e)) out.push(0);
    if (out.length) out[out.length - 1] += HistoryEventMessage.encode(e).finish().length;
  }
  return out;
}

/**
 * The histories of every execution of a run chain, oldest first, followed
 * through each first event's link to the execution it continued (no
 * visibility query, which may lag right after a run closes).
 */
export async function chainHistories(client: Client, workflowId: string): Promise<proto.temporal.api.history.v1.IHistory[]> {
  const out = [];
  let runId: string | undefined;
  for (;;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    out.unshift(history);
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) return out;
  }
}

/** The events of every execution of a workflow id (continue-as-new included), oldest first. */
export async function chainEvents(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  return (await chainHistories(client, workflowId)).flatMap((h) => h.events ?? []);
}

/** Every model call's input in the order they were scheduled, decoded through the client's converter. */
export async function modelCallInputs(client: Client, handle: WorkflowHandle): Promise<CallModelInput[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const conv = client.options.loadedDataConverter;
  const out: CallModelInput[] = [];
  for (const e of events.filter(isModelCall)) {
    const payloads = e.activityTaskScheduledEventAttributes?.input?.payloads ?? [];
    const [decoded] = await conv.payloadCodecs.reduceRight(async (p, codec) => codec.decode(await p), Promise.resolve(payloads));
    out.push(conv.payloadConverter.fromPayload<CallModelInput>(decoded));
  }
  return out;
}

/** The started event's links of one execution: the first event only, one small page. */
async function startedAttributes(client: Client, workflowId: string, runId: string): Promise<proto.temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes> {
  const page = await client.workflowService.getWorkflowExecutionHistory({ namespace: client.options.namespace, execution: { workflowId, runId }, maximumPageSize: 1 });
  const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`run ${runId} of ${workflowId} has no started event`);
  return started;
}

/**
 * The run chain an execution belongs to, as the workflow names it (see
 * agentRun): a reset run starts a chain named by its own run id (its started
 * event is a copy of the run it was reset from, whose run id it records as
 * the original one); otherwise an execution continues the chain of the one it
 * continued as new from, and a first execution starts a chain of its own.
 * From history links only: no clock decides.
 */
export async function chainOfRun(client: Client, workflowId: string, runId: string): Promise<string> {
  for (let current = runId; ; ) {
    const started = await startedAttributes(client, workflowId, current);
    const isReset = !!started.originalExecutionRunId && started.originalExecutionRunId !== current;
    if (isReset || !started.continuedExecutionRunId) return current;
    current = started.continuedExecutionRunId;
  }
}

/** The chain of the workflow id's current run, the one the server starts last (a reset run, a reused id's new run). */
export async function latestChain(client: Client, workflowId: string): Promise<string> {
  const d = await client.workflow.getHandle(workflowId).describe();
  return chainOfRun(client, workflowId, d.runId);
}
