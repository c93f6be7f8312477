// Reading a run's live stream (topic `events`) from any process that reaches
// Temporal: long-polls by update from an offset (each poll an update, one
// Temporal Action), follows continue-as-new, and ends with run_stopped. What
// the run published after the subscriber's last poll, or a whole run that
// ended before anyone subscribed, is read by the streamItems query, which a
// worker answers from the closed run too.
//
// A reader behind the live end (it subscribed late, slept, or the run closed
// or continued as new meanwhile) catches up by that query rather than by
// polls, whose answers the run's history would keep: on the execution that
// holds its offset, found through the chain's history links and the start
// offset each answer carries, a worker replaying a closed execution's history
// to answer (workflows/run-stream.ts). Offsets are contiguous: an item that
// truly cannot be had (an execution no worker can replay any more) is a `gap`
// item naming its offsets, never a jump.
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
import type { RunEventItem, RunStreamItem, StreamEvent, StreamGap, StreamWindow } from '../common/stream-items.js';

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

/** How `events()` polls the live stream. */
export interface EventsOptions {
  /** Minimum milliseconds between polls while nothing new arrives (default 100). */
  pollCooldownMs?: number;
}

/** The offset asked for is past the stream's end: nothing was ever published there. */
export class StreamOffsetError extends Error {
  constructor(
    /** The run read. */
    readonly workflowId: string,
    /** The offset asked for. */
    readonly fromOffset: number,
    /** The stream's end: the offset its next item will have. */
    readonly end: number,
  ) {
    super(`${workflowId}: offset ${fromOffset} is past the end of its stream (${end} items so far); read from ${end} or less`);
    this.name = 'StreamOffsetError';
  }
}

/** The run has no live stream: it was started by a worker older than the stream. */
export class NoStreamError extends Error {
  constructor(
    /** The run asked about. */
    readonly workflowId: string,
    cause: unknown,
    waitedMs?: number,
  ) {
    super(
      `${workflowId} has no live stream${waitedMs !== undefined ? ` (its poll had no handler for ${waitedMs} ms)` : ''} (a worker older than the stream started it): read its trace (agent-harness trace ${workflowId})`,
      { cause },
    );
    this.name = 'NoStreamError';
  }
}

/**
 * How runEvents reads the stream by query: `runId` one execution of the
 * chain, undefined the workflow id's current one. Bounded: a page of
 * `maxItems` items at most (STREAM_PAGE_ITEMS when absent).
 */
export type WindowQuery = (fromOffset: number, runId?: string, maxItems?: number) => Promise<StreamWindow>;

/**
 * How long a reader retries a poll the run has no handler for yet (a run
 * started by a worker from before the stream's handlers were set first
 * thing, in the moment before it sets them), before it says the run has no
 * stream.
 */
export const NO_HANDLER_RETRY_MS = 10_000;

/**
 * The run's stream from `fromOffset`, every item in order with contiguous
 * offsets (a `gap` item where some truly cannot be had), ending with
 * run_stopped. `end`: the stream's end offset now, when a worker could be
 * asked (an offset past it is refused); undefined: not checked.
 */
export async function* runEvents(
  client: Client,
  workflowId: string,
  fromOffset: number,
  end: number | undefined,
  windowOf: WindowQuery,
  options: EventsOptions = {},
): AsyncGenerator<RunEventItem, void, undefined> {
  if (typeof fromOffset !== 'number' || !Number.isSafeInteger(fromOffset) || fromOffset < 0) throw new RangeError(`fromOffset must be a whole number of 0 or more, got ${String(fromOffset)}`);
  if (end !== undefined && fromOffset > end) throw new StreamOffsetError(workflowId, fromOffset, end);
  const cooldownMs = options.pollCooldownMs ?? 100;
  const converter = client.options.loadedDataConverter.payloadConverter;
  const back = new ReadBack(client, workflowId, windowOf);
  // No run id: each poll goes to the workflow id's current execution, so continue-as-new is followed as it happens.
  const handle = client.workflow.getHandle(workflowId);
  let next = fromOffset;
  // Behind the live end (a late reader, one reconnecting): catch up by query first, so polls are only for what is new.
  if (fromOffset > 0) {
    const caught = yield* back.catchUp(next, false);
    if (caught.stopped) return;
    next = caught.next;
  }
  let noHandlerSince: number | null = null;
  for (;;) {
    let result: PollResult;
    try {
      const update = await handle.startUpdate<PollResult, [PollInput]>(POLL_UPDATE, { args: [{ topics: ['events'], from_offset: next }], waitForStage: WorkflowUpdateStage.ACCEPTED });
      result = await update.result();
    } catch (err) {
      const type = failureType(err);
      // Older than the current execution holds (it continued as new while this reader was behind): read the rest back.
      if (type === 'TruncatedOffset') {
        const caught = yield* back.catchUp(next, false);
        if (caught.stopped) return;
        next = caught.next;
        continue;
      }
      if (isUnknownUpdate(err)) {
        // A run whose worker sets the stream's handlers after its first await: poll again for a moment, then say so.
        noHandlerSince ??= Date.now();
        if (Date.now() - noHandlerSince < NO_HANDLER_RETRY_MS) {
          await sleep(Math.min(cooldownMs, 50));
          continue;
        }
        throw new NoStreamError(workflowId, err, NO_HANDLER_RETRY_MS);
      }
      const expected = type === 'StreamDraining' || type === 'AcceptedUpdateCompletedWorkflow' || err instanceof WorkflowNotFoundError || err instanceof WorkflowUpdateRPCTimeoutOrCancelledError;
      // Draining for continue-as-new or closing, a poll the closing run did not answer, a run gone, a poll that waited too long for a worker:
      // poll again while the workflow id runs, else read the rest from the closed run. Anything else is an error, unless the run has closed.
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') break;
      if (!expected) throw err;
      await sleep(cooldownMs);
      continue;
    }
    noHandlerSince = null;
    for (const item of result.items) {
      if (item.topic !== 'events' || item.offset < next) continue;
      // The library moves a poll from 0 to the oldest item it holds: what lies before is read back, not skipped.
      if (item.offset > next) {
        const caught = yield* back.catchUp(next, false, item.offset);
        if (caught.stopped) return;
        next = caught.next;
        if (item.offset < next) continue;
      }
      const event: RunStreamItem = { ...decode(converter, item.data), offset: item.offset };
      yield event;
      next = item.offset + 1;
      if (event.type === 'run_stopped') return;
    }
    next = Math.max(next, result.next_offset);
    if (!result.more_ready) await sleep(cooldownMs);
  }
  // It closed between two polls, or before the first: the rest is read back from its executions.
  yield* back.catchUp(next, true);
}

/**
 * Reads a run's items by the streamItems query, from the execution that
 * holds an offset on: bounded pages, the chain of executions (run ids only)
 * found through each execution's first history event.
 */
class ReadBack {
  /** The chain's executions, oldest first, as far as found; each with its first offset once asked. */
  private chain: { runId: string; start?: number }[] = [];

  constructor(
    private readonly client: Client,
    private readonly workflowId: string,
    private readonly windowOf: WindowQuery,
  ) {}

  /**
   * Yields the items from `from` up to the current execution's end (or to
   * `until`, exclusive), reading older executions back. `closed`: the run
   * has ended, so whatever is past the last item read never comes, and an
   * offset past the end is an error. Returns where it stopped, and whether
   * it yielded run_stopped.
   */
  async *catchUp(from: number, closed: boolean, until = Infinity): AsyncGenerator<RunEventItem, { next: number; stopped: boolean }, undefined> {
    let next = from;
    let current: StreamWindow;
    try {
      current = await this.windowOf(next, undefined, 1);
    } catch (err) {
      // A run that failed before its stream existed (a bad input, on a worker older than this) has nothing to read: its result says why.
      if (closed && isUnknownQuery(err)) return { next, stopped: false };
      throw err;
    }
    if (closed && next > current.end) throw new StreamOffsetError(this.workflowId, next, current.end);
    let index = 0;
    if (next < current.start) {
      await this.findChain(current.runId);
      index = await this.holding(next);
    } else {
      this.chain = [{ runId: current.runId, start: current.start }];
    }
    for (; index < this.chain.length; index += 1) {
      const execution = this.chain[index]!;
      for (;;) {
        if (next >= until) return { next, stopped: false };
        let page: StreamWindow;
        try {
          page = await this.windowOf(next, execution.runId);
        } catch (err) {
          if (!isReplayFailure(err)) throw err;
          // This execution cannot be read back (its history is gone, or no worker can replay it any more): say which offsets, then go on.
          const following = this.chain[index + 1];
          const to = following ? (following.start ?? (await this.startOf(index + 1))) - 1 : until - 1;
          if (!Number.isFinite(to)) throw err;
          if (to >= next) yield gap(next, to, `execution ${execution.runId} could not be read back: ${err instanceof Error ? err.message : String(err)}`);
          next = to + 1;
          break;
        }
        if (page.start > next) {
          yield gap(next, Math.min(page.start, until) - 1, `execution ${execution.runId} no longer holds them`);
          next = Math.min(page.start, until);
        }
        for (const item of page.items) {
          if (item.offset < next) continue;
          if (item.offset >= until) return { next, stopped: false };
          if (item.offset > next) yield gap(next, item.offset - 1, `execution ${execution.runId} skipped them`);
          yield item;
          next = item.offset + 1;
          if (item.type === 'run_stopped') return { next, stopped: true };
        }
        if (page.items.length === 0 || next >= page.end) break;
      }
      // The last execution found: a newer one may have started meanwhile (the run continued as new while this read).
      if (index === this.chain.length - 1) {
        const newer = await this.newerThan(execution.runId);
        if (newer) this.chain.push({ runId: newer });
      }
    }
    return { next, stopped: false };
  }

  /** The chain up to `latest`, oldest first: each execution's first history event names the one it continued. */
  private async findChain(latest: string): Promise<void> {
    const ids = [latest];
    for (let runId: string | undefined = latest; runId; ) {
      runId = await this.continued(runId);
      if (runId) ids.unshift(runId);
    }
    this.chain = ids.map((runId) => ({ runId }));
  }

  /** The index of the last execution whose first offset is at or before `offset` (a binary search: each probe one small query). */
  private async holding(offset: number): Promise<number> {
    let lo = 0;
    let hi = this.chain.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if ((await this.startOf(mid)) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private async startOf(index: number): Promise<number> {
    const e = this.chain[index]!;
    if (e.start === undefined) {
      try {
        e.start = (await this.windowOf(0, e.runId, 1)).start;
      } catch (err) {
        if (!isReplayFailure(err)) throw err;
        // Unreadable: treat it as starting where the one before it did, so a search passes over it and the read reports its gap.
        e.start = index === 0 ? 0 : await this.startOf(index - 1);
      }
    }
    return e.start;
  }

  private async continued(runId: string): Promise<string | undefined> {
    const page = await this.client.workflowService.getWorkflowExecutionHistory({ namespace: this.client.options.namespace, execution: { workflowId: this.workflowId, runId }, maximumPageSize: 1 });
    return page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }

  /** The execution `runId` continued as new into, if it has. */
  private async newerThan(runId: string): Promise<string | undefined> {
    const page = await this.client.workflowService.getWorkflowExecutionHistoryReverse({ namespace: this.client.options.namespace, execution: { workflowId: this.workflowId, runId }, maximumPageSize: 1 });
    const last = page.history?.events?.[0];
    return last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId || undefined;
  }
}

function gap(from: number, to: number, reason: string): StreamGap {
  return { type: 'gap', from, to, offset: to, reason };
}

/** A query a worker could not answer from the execution's history (replay failed, history gone): not a missing worker, which is an error to retry later. */
function isReplayFailure(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e.name === 'NoWorkerError' || e.name === 'NoAnswerError') return false;
    if (e.name === 'QueryNotRegisteredError' || /nondetermin|not found|history|replay|query failed|QueryFailed/i.test(`${e.name} ${e.message}`)) return true;
  }
  return false;
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

/** The run has no handler for the poll (yet): the SDK's "No registered handler for update", or the server's unknown-update words. */
function isUnknownUpdate(err: unknown): boolean {
  if (!(err instanceof WorkflowUpdateFailedError)) return false;
  const cause = err.cause;
  return cause instanceof ApplicationFailure && /no registered handler for update|not registered|unknown update/i.test(cause.message);
}
