// Reading a run's live stream (topic `events`) from any process that reaches
// Temporal: long-polls by update from an offset (each poll an update, one
// Temporal Action), follows continue-as-new, and ends with run_stopped. What
// the run published after the subscriber's last poll, or a whole run that
// ended before anyone subscribed, is read by the streamItems query, which a
// worker answers from the closed run too.
//
// The polls speak @temporalio/workflow-streams' protocol (its fixed update
// name and wire items) but are sent here rather than by its subscriber: that
// one follows continue-as-new by describing the last run that admitted a
// poll, and when the chain's last run refuses polls while it closes (it is
// draining) and then completes, it finds that older run continued-as-new and
// retries the closed one forever. Here a closed run ends the polling, and the
// window query reads what is left.
import type { Client } from '@temporalio/client';
import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError, type PayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { RunStreamItem, StreamEvent, StreamWindow } from '../common/stream-items.js';

/** The library's poll update and its wire types (cross-language names, fixed by @temporalio/workflow-streams). */
const POLL_UPDATE = '__temporal_workflow_stream_poll';
interface PollInput {
  topics: string[];
  from_offset: number;
}
interface PollResult {
  items: { topic: string; data: string; offset: number }[];
  next_offset: number;
  more_ready: boolean;
}

export interface EventsOptions {
  /** Minimum milliseconds between polls while nothing new arrives (default 100). */
  pollCooldownMs?: number;
}

/** The offset asked for is past the stream's end: nothing was ever published there. */
export class StreamOffsetError extends Error {
  constructor(
    readonly workflowId: string,
    readonly fromOffset: number,
    readonly end: number,
  ) {
    super(`${workflowId}: offset ${fromOffset} is past the end of its stream (${end} items so far); read from ${end} or less`);
    this.name = 'StreamOffsetError';
  }
}

/** The run has no live stream: it was started by a worker older than the stream. */
export class NoStreamError extends Error {
  constructor(
    readonly workflowId: string,
    cause: unknown,
  ) {
    super(`${workflowId} has no live stream (a worker older than the stream started it): read its trace (agent-harness trace ${workflowId})`, { cause });
    this.name = 'NoStreamError';
  }
}

/** How runEvents reads a closed run's window: a bounded query (a worker replays the run to answer it). */
export type WindowQuery = (fromOffset: number) => Promise<StreamWindow>;

/**
 * The run's stream from `fromOffset` (0: from the start of what the stream
 * still holds), ending with run_stopped. `end`: the stream's end offset now,
 * when a worker could be asked (an offset past it is refused); undefined: not
 * checked.
 */
export async function* runEvents(
  client: Client,
  workflowId: string,
  fromOffset: number,
  end: number | undefined,
  windowOf: WindowQuery,
  options: EventsOptions = {},
): AsyncGenerator<RunStreamItem, void, undefined> {
  if (!Number.isInteger(fromOffset) || fromOffset < 0) throw new RangeError(`fromOffset must be a whole number of 0 or more, got ${String(fromOffset)}`);
  if (end !== undefined && fromOffset > end) throw new StreamOffsetError(workflowId, fromOffset, end);
  const cooldownMs = options.pollCooldownMs ?? 100;
  const converter = client.options.loadedDataConverter.payloadConverter;
  // No run id: each poll goes to the workflow id's current execution, so continue-as-new is followed as it happens.
  const handle = client.workflow.getHandle(workflowId);
  let next = fromOffset;
  for (;;) {
    let result: PollResult;
    try {
      const update = await handle.startUpdate<PollResult, [PollInput]>(POLL_UPDATE, { args: [{ topics: ['events'], from_offset: next }], waitForStage: WorkflowUpdateStage.ACCEPTED });
      result = await update.result();
    } catch (err) {
      const type = failureType(err);
      // Older than the window: read from its start (the offsets show the gap).
      if (type === 'TruncatedOffset') {
        next = 0;
        continue;
      }
      if (isUnknownUpdate(err)) throw new NoStreamError(workflowId, err);
      const expected = type === 'StreamDraining' || type === 'AcceptedUpdateCompletedWorkflow' || err instanceof WorkflowNotFoundError || err instanceof WorkflowUpdateRPCTimeoutOrCancelledError;
      // Draining for continue-as-new or closing, a poll the closing run did not answer, a run gone, a poll that waited too long for a worker:
      // poll again while the workflow id runs, else read the rest from the closed run. Anything else is an error, unless the run has closed.
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') break;
      if (!expected) throw err;
      await sleep(cooldownMs);
      continue;
    }
    for (const item of result.items) {
      if (item.topic !== 'events') continue;
      const event: RunStreamItem = { ...decode(converter, item.data), offset: item.offset };
      yield event;
      if (event.type === 'run_stopped') return;
    }
    next = result.next_offset;
    if (!result.more_ready) await sleep(cooldownMs);
  }
  // It closed between two polls, or before the first: the rest is in its last execution's window.
  let rest: StreamWindow;
  try {
    rest = await windowOf(next);
  } catch (err) {
    // A run that failed before its stream existed (a bad input) has nothing to read: its result says why.
    if (isUnknownQuery(err)) return;
    throw err;
  }
  for (const event of rest.items) {
    yield event;
    if (event.type === 'run_stopped') return;
  }
}

/** A wire item: a Payload's protobuf bytes, base64. */
function decode(converter: PayloadConverter, data: string): StreamEvent {
  return converter.fromPayload<StreamEvent>(proto.temporal.api.common.v1.Payload.decode(Buffer.from(data, 'base64')));
}

function failureType(err: unknown): string | undefined {
  const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
  return cause instanceof ApplicationFailure ? cause.type ?? undefined : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isUnknownQuery(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e.name === 'QueryNotRegisteredError' || /query handler .*not registered|did not register a handler for streamItems/i.test(e.message)) return true;
  }
  return false;
}

function isUnknownUpdate(err: unknown): boolean {
  if (!(err instanceof WorkflowUpdateFailedError)) return false;
  const cause = err.cause;
  return cause instanceof ApplicationFailure && /not registered|unknown update/i.test(cause.message);
}
