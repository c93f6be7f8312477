// Reading a run's live stream (topic `events`) from any process that reaches
// Temporal: long-polls by update from an offset (each poll an update, one
// Temporal Action), follows continue-as-new, and ends with run_stopped. What
// the run published after the subscriber's last poll, or a whole run that
// ended before anyone subscribed, is read by the streamItems query, which a
// worker answers from the closed run too.
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { RunStreamItem, StreamEvent, StreamWindow } from '../common/stream-items.js';

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
  let next = fromOffset;
  for (;;) {
    const topic = WorkflowStreamClient.create(client, workflowId).topic<StreamEvent>('events');
    try {
      for await (const item of topic.subscribe(next, { pollCooldown: options.pollCooldownMs ?? 100 })) {
        const event: RunStreamItem = { ...item.data, offset: item.offset };
        next = item.offset + 1;
        yield event;
        if (event.type === 'run_stopped') return;
      }
    } catch (err) {
      if (isUnknownUpdate(err)) throw new NoStreamError(workflowId, err);
      throw err;
    }
    // The subscription ended: a poll that timed out waiting for a worker (poll again), or the run closed.
    const { status } = await client.workflow.getHandle(workflowId).describe();
    if (status.name === 'RUNNING') continue;
    // It closed between two polls, or before the first: the rest is in its last execution's window.
    for (const event of (await windowOf(next)).items) {
      yield event;
      if (event.type === 'run_stopped') return;
    }
    return;
  }
}

function isUnknownUpdate(err: unknown): boolean {
  if (!(err instanceof WorkflowUpdateFailedError)) return false;
  const cause = err.cause;
  return cause instanceof ApplicationFailure && /not registered|unknown update/i.test(cause.message);
}
