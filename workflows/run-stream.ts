// The run's live stream (@temporalio/workflow-streams, topic `events`): every
// trace event as the workflow emits it, and what the worker's activities
// publish into it (the model's text as it arrives, tool progress). A
// subscriber long-polls by update from an offset and follows continue-as-new;
// the streamItems query answers from the same log, also after the run closed.
//
// What is kept, and where a reader far behind finds it:
// - An execution keeps every item it published, in memory, for its whole
//   life. That is bounded by what bounds the execution: it continues as new
//   when its history is too long (./continue-as-new.ts), and every item is
//   either a publish signal in that history (the activities' items) or comes
//   from an event of it (the workflow's own trace events, a few per turn).
// - Continue-as-new carries only the last STREAM_WINDOW_TURNS turns (the
//   window), so the carried state stays small; the next execution's log
//   starts there, offsets counting on.
// - The items an execution held and its successor did not carry are read
//   from that closed execution by the streamItems query, which a worker
//   answers by replaying its history: the activities' items come back from
//   the publish signals it recorded, the workflow's events from its code, at
//   the same offsets. Nothing is read from a worker's disk.
//
// Publishing from workflow code is no command and costs nothing until someone
// reads; a poll is an update (one Action) whose answer history keeps, so the
// reader (client/run-events.ts) catches up by the query and polls only at the
// live end.
//
// The stream's handlers are set first thing in the run (agentRun builds this
// before anything awaits): an update with no handler at the end of the first
// workflow task is refused, so a reader that polled the moment `start`
// returned got "No registered handler" when the start awaited its
// configuration first.
import * as wf from '@temporalio/workflow';
import {
  WorkflowStream,
  decodePayloadWire,
  workflowStreamPollUpdate,
  type PollInput,
  type PollResult,
  type WorkflowStreamState,
} from '@temporalio/workflow-streams/workflow';
import { streamItemsQuery } from '../common/run-messages.js';
import { STREAM_PAGE_BYTES, STREAM_PAGE_ITEMS, type RunStreamItem, type StreamEvent, type StreamTokenEnd, type StreamTokenText, type StreamWindow } from '../common/stream-items.js';
import type { TraceEvent } from './trace.js';
import type { HeldLine } from '../common/activity-contract.js';
import { unreadableProblem } from '../common/undecodable.js';

/** The topic every item of a run is published on (the contract's name). */
export const EVENTS_TOPIC = 'events';

/** Turns of items continue-as-new carries into the next execution (older ones are read back from the closed one). */
export const STREAM_WINDOW_TURNS = 4;

/**
 * How long a closing run waits at most for a reader that has not read its
 * end yet. A reader that keeps up comes back within its poll cooldown
 * (100 ms by default) plus a round trip to the server: a few hundred ms on a
 * loaded machine, so 5 s covers a slow one; a reader gone for good holds the
 * close no longer than that. Nobody behind: no wait at all (and no timer).
 */
export const CLOSE_DRAIN_MS = 5_000;

/** A reader answered this long before the run closes and not back since has stopped reading: the close does not wait for it. */
export const READER_GONE_MS = 10_000;

/** Readers between two polls remembered at most (each a distinct offset handed out): a bound on what hostile polls can make the run keep. */
const MAX_READERS = 1_000;

/** What continue-as-new carries of the stream: the library's state and the window's turn boundaries. */
export interface CarriedStream {
  state: WorkflowStreamState;
  /** The log's offset at each of the last turn boundaries, oldest first. */
  boundaries: number[];
}

/** The stream library's publish signal, by name: its handler is the library's own. */
export const PUBLISH_SIGNAL = '__temporal_workflow_stream_publish';

/** Why a publish signal's payload is not one the library can take, or null. */
export function publishProblem(input: unknown): string | null {
  const undecodable = unreadableProblem(input, `${PUBLISH_SIGNAL} signal's payload`);
  if (undecodable) return undecodable;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return `${PUBLISH_SIGNAL} takes {"items": [...], "publisher_id": "...", "sequence": n}`;
  const { items, publisher_id: publisher, sequence } = input as Record<string, unknown>;
  if (!Array.isArray(items)) return `${PUBLISH_SIGNAL}: items must be an array`;
  if (publisher !== undefined && publisher !== null && publisher !== '' && (typeof publisher !== 'string' || typeof sequence !== 'number')) {
    return `${PUBLISH_SIGNAL}: publisher_id must be a string with a number sequence`;
  }
  const bad = items.findIndex((e) => typeof e !== 'object' || e === null || typeof (e as Record<string, unknown>).topic !== 'string' || typeof (e as Record<string, unknown>).data !== 'string');
  return bad < 0 ? null : `${PUBLISH_SIGNAL}: items[${bad}] must be {"topic": string, "data": base64 string}`;
}

// The library's publish handler throws on a payload not of its shape (or a
// marker for one the worker could not decode): a TypeError in a signal
// handler fails the workflow task for good. Its handler is set inside its
// constructor (buffered publishes are delivered there at once), so the guard
// sits on the method it calls; each refusal reaches the RunStream that owns
// the library's stream, or the one being built.
const owners = new WeakMap<object, RunStream>();
let building: RunStream | null = null;
const libraryStream = WorkflowStream.prototype as unknown as { onPublish?: (input: unknown) => void };
const libraryPublish = libraryStream.onPublish;
if (typeof libraryPublish === 'function' && !(libraryPublish as { guarded?: boolean }).guarded) {
  const guarded = function (this: object, input: unknown): void {
    const owner = owners.get(this) ?? building;
    let problem = publishProblem(input);
    if (problem === null) {
      try {
        libraryPublish.call(this, input);
        return;
      } catch (err) {
        problem = `${PUBLISH_SIGNAL}: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    owner?.ignorePublish(problem);
  };
  libraryStream.onPublish = Object.assign(guarded, { guarded: true });
}

/** The library's poll handler, which wrapPoll wraps (it is private in 1.23: checked at run time, see below). */
type PollHandler = (input: PollInput) => Promise<PollResult>;

export class RunStream {
  private readonly stream: WorkflowStream;
  private readonly events;
  /** Publish signals refused before the trace could take them (delivered while the stream was built). */
  private ignored: string[] = [];
  private onIgnored: ((reason: string) => void) | null = null;
  private readonly boundaries: number[];
  /** Offsets handed to readers by a poll's answer, each with how many readers hold it and when: readers between two polls. */
  private readonly between = new Map<number, { readers: number; at: number }>();
  private draining = false;
  /** Polls parked in the run now, and when a poll last arrived or was answered: whether anyone watches (`watched`). */
  private polling = 0;
  private lastPollAt: number | null = null;
  private readonly texts;
  private readonly lines;

  constructor(prior: CarriedStream | undefined) {
    // Read only while the library's constructor runs (synchronously): publishes it delivers then are this stream's.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    building = this;
    try {
      this.stream = new WorkflowStream(prior?.state);
    } finally {
      building = null;
    }
    owners.set(this.stream, this);
    this.events = this.stream.topic<TraceEvent>(EVENTS_TOPIC);
    this.texts = this.stream.topic<StreamTokenText | StreamTokenEnd>(EVENTS_TOPIC);
    this.lines = this.stream.topic<HeldLine>(EVENTS_TOPIC);
    this.boundaries = [...(prior?.boundaries ?? [])];
    wf.setHandler(streamItemsQuery, (fromOffset, maxItems) => this.window(fromOffset, maxItems));
    this.wrapPoll();
  }

  /** A publish signal refused (publishProblem): traced as ignored once the trace is attached. */
  ignorePublish(reason: string): void {
    if (this.onIgnored) this.onIgnored(reason);
    else this.ignored.push(reason);
  }

  /** Where refused publishes are traced from now on; those refused before are traced at once. */
  traceIgnoredWith(emit: (reason: string) => void): void {
    this.onIgnored = emit;
    for (const reason of this.ignored.splice(0)) emit(reason);
  }

  publish(event: TraceEvent): void {
    this.events.publish(event);
  }

  /**
   * Whether a reader is attached: a poll is parked in the run, or one came or
   * was answered less than READER_GONE_MS ago (a reader that keeps up is
   * back within its cooldown). Read when a model call is sent: its tokens are
   * published as they arrive only then, since each batch is a signal (an
   * Action). Polls are updates, so a replay reads the same answer.
   */
  watched(): boolean {
    return this.polling > 0 || (this.lastPollAt !== null && Date.now() - this.lastPollAt < READER_GONE_MS);
  }

  /**
   * A reply's text that was not published as it arrived (nobody watched when
   * its call was sent), published whole as its attempt's one `token` and its
   * `token_end`: a reader that attaches later reads what each turn said, the
   * same items a watched run has, in one piece. From workflow code: no
   * command, no Action. Nothing for an attempt that said nothing, as when streamed.
   */
  publishHeldText(turn: number, attempt: number, text: string, outcome: 'counted' | 'stopped'): void {
    if (text === '') return;
    this.texts.publish({ type: 'token', turn, attempt, text });
    this.texts.publish({ type: 'token_end', turn, attempt, outcome });
  }

  /**
   * The lines a tool activity held back because nobody watched when its call
   * was sent (progress, effect notes: RunToolResult.heldLines), published as
   * it returns, before the call's result event, where a watched call's are.
   * From workflow code: no command, no Action.
   */
  publishHeldLines(lines: readonly HeldLine[]): void {
    for (const line of lines) this.lines.publish(line);
  }

  /** A turn boundary: remembers where the log ends (items activities published count too), for the window continue-as-new carries. */
  turnBoundary(): void {
    this.boundaries.push(this.end());
    if (this.boundaries.length > STREAM_WINDOW_TURNS) this.boundaries.shift();
  }

  /** No new poll is admitted and waiting ones answer with what they have: the run is about to close or continue as new. */
  detach(): void {
    this.draining = true;
    this.stream.detachPollers();
  }

  /**
   * The run has published its last item: waits, at most CLOSE_DRAIN_MS, for
   * the readers between two polls that have not read to the end (answered
   * less than READER_GONE_MS ago) to come back for the rest. A reader
   * parked in a poll has it already: publishing woke it. Returns how long it
   * waited (0, and no timer in history, when nobody is behind).
   */
  async drainReaders(): Promise<number> {
    const end = this.end();
    const since = Date.now() - READER_GONE_MS;
    const behind = () => [...this.between].some(([offset, r]) => offset < end && r.at >= since);
    if (!behind()) return 0;
    const started = Date.now();
    await wf.condition(() => !behind(), CLOSE_DRAIN_MS);
    return Date.now() - started;
  }

  /** What continue-as-new hands the next execution: the window (the last turns), its offsets and the publishers' dedup marks. */
  carried(): CarriedStream {
    // Cut from the snapshot, not the log: this execution keeps every item to
    // the end, so a query that replays it once closed answers them all.
    const state = this.state();
    const from = Math.max(state.base_offset, this.boundaries[0] ?? state.base_offset);
    return { state: { ...state, log: state.log.slice(from - state.base_offset), base_offset: from }, boundaries: [...this.boundaries] };
  }

  /**
   * The items on topic `events` from `fromOffset`, at most `maxItems` (and
   * about STREAM_PAGE_BYTES), with where this execution's log starts and the
   * run ids a reader needs to go further back. An offset that is not a whole
   * number of 0 or more is refused, naming it.
   */
  private window(fromOffset: unknown, maxItems: unknown): StreamWindow {
    if (typeof fromOffset !== 'number' || !Number.isSafeInteger(fromOffset) || fromOffset < 0) {
      throw new RangeError(`streamItems: fromOffset must be a whole number of 0 or more, got ${JSON.stringify(fromOffset) ?? String(fromOffset)}`);
    }
    const limit = maxItems === undefined || maxItems === null ? STREAM_PAGE_ITEMS : maxItems;
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`streamItems: maxItems must be a whole number of 1 or more, got ${JSON.stringify(maxItems) ?? String(maxItems)}`);
    }
    const s = this.state();
    const items: RunStreamItem[] = [];
    let bytes = 0;
    for (let i = Math.max(0, fromOffset - s.base_offset); i < s.log.length && items.length < Math.min(limit, STREAM_PAGE_ITEMS); i += 1) {
      const item = s.log[i];
      if (!item || item.topic !== EVENTS_TOPIC) continue;
      bytes += item.data.length;
      if (bytes > STREAM_PAGE_BYTES && items.length > 0) break;
      items.push({ ...wf.defaultPayloadConverter.fromPayload<StreamEvent>(decodePayloadWire(item.data)), offset: s.base_offset + i });
    }
    const info = wf.workflowInfo();
    return { items, end: s.base_offset + s.log.length, start: s.base_offset, runId: info.runId, firstRunId: info.firstExecutionRunId };
  }

  private end(): number {
    const s = this.stream as unknown as { baseOffset?: unknown; log?: unknown };
    // The library's own fields when they are what 1.23 has (no encoding of the log); else its snapshot.
    if (typeof s.baseOffset === 'number' && Array.isArray(s.log)) return s.baseOffset + s.log.length;
    const state = this.state();
    return state.base_offset + state.log.length;
  }

  /**
   * Replaces the library's poll handler by one that calls it and also (1)
   * refuses a poll whose offset or topics are not what the protocol says (a
   * poll from "x" or -1 would otherwise wait for ever, as NaN compares false)
   * and (2) remembers which offsets it handed out and which readers came back,
   * so drainReaders knows who is behind. Left as the library set it if its
   * handler is not where 1.23 has it.
   */
  private wrapPoll(): void {
    const inner = (this.stream as unknown as { onPoll?: unknown }).onPoll;
    if (typeof inner !== 'function') return;
    const poll = (inner as PollHandler).bind(this.stream);
    wf.setHandler(
      workflowStreamPollUpdate,
      async (input: PollInput) => {
        this.cameBack(input.from_offset);
        this.polling += 1;
        this.lastPollAt = Date.now();
        let result: PollResult;
        try {
          result = await poll(input);
        } finally {
          this.polling -= 1;
          this.lastPollAt = Date.now();
        }
        this.handedOut(result.next_offset);
        return result;
      },
      {
        validator: (input: PollInput) => {
          if (this.draining) {
            // The library's own refusal, which its subscriber (and ours) retries on the next execution.
            throw wf.ApplicationFailure.create({ message: 'Workflow is draining for continue-as-new', type: 'StreamDraining', nonRetryable: true });
          }
          const offset: unknown = input?.from_offset;
          if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
            throw wf.ApplicationFailure.create({ message: `from_offset must be a whole number of 0 or more, got ${JSON.stringify(offset) ?? String(offset)}`, type: 'InvalidOffset', nonRetryable: true });
          }
          const topics: unknown = input.topics;
          if (!Array.isArray(topics) || topics.some((t) => typeof t !== 'string')) {
            throw wf.ApplicationFailure.create({ message: 'topics must be an array of topic names', type: 'InvalidOffset', nonRetryable: true });
          }
        },
      },
    );
  }

  private cameBack(offset: number): void {
    const r = this.between.get(offset);
    if (!r) return;
    r.readers -= 1;
    if (r.readers <= 0) this.between.delete(offset);
  }

  private handedOut(offset: number): void {
    const r = this.between.get(offset);
    if (r) {
      r.readers += 1;
      r.at = Date.now();
      return;
    }
    if (this.between.size >= MAX_READERS) {
      const oldest = this.between.keys().next().value;
      if (oldest !== undefined) this.between.delete(oldest);
    }
    this.between.set(offset, { readers: 1, at: Date.now() });
  }

  /** The library's snapshot (it encodes the log: used for queries and continue-as-new, not per item). */
  private state(): WorkflowStreamState {
    return this.stream.getState();
  }
}
