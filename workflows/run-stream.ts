// The run's live stream (@temporalio/workflow-streams, topic `events`): every
// trace event as the workflow emits it, and what the worker's activities
// publish into it (the model's text as it arrives, tool progress). A
// subscriber long-polls by update from an offset and follows continue-as-new;
// the streamItems query answers from the same log, also after the run closed.
//
// Publishing from workflow code is no command and costs nothing until someone
// reads; a poll is an update (one Action) whose answer history keeps. To keep
// history flat the log is a window: at each turn boundary what is older than
// the last STREAM_WINDOW_TURNS turns is dropped, and continue-as-new carries
// only that window. A subscriber further behind than the window resumes at the
// window's start; the offsets it sees tell it what it missed (the trace file
// and the history keep everything).
import * as wf from '@temporalio/workflow';
import { WorkflowStream, decodePayloadWire, type WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { streamItemsQuery } from '../common/run-messages.js';
import type { RunStreamItem, StreamEvent, StreamWindow } from '../common/stream-items.js';
import type { TraceEvent } from './trace.js';
import { unreadableProblem } from '../common/undecodable.js';

/** The topic every item of a run is published on (the contract's name). */
export const EVENTS_TOPIC = 'events';

/** Turns of items kept for a subscriber that reconnects behind the live end. */
export const STREAM_WINDOW_TURNS = 4;

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

export class RunStream {
  private readonly stream: WorkflowStream;
  private readonly events;
  /** Publish signals refused before the trace could take them (delivered while the stream was built). */
  private ignored: string[] = [];
  private onIgnored: ((reason: string) => void) | null = null;
  private readonly boundaries: number[];

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
    this.boundaries = [...(prior?.boundaries ?? [])];
    wf.setHandler(streamItemsQuery, (fromOffset) => this.window(fromOffset));
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

  /** A turn boundary: remembers where the log ends (items activities published count too) and drops what is older than the window. */
  turnBoundary(): void {
    const s = this.state();
    this.boundaries.push(s.base_offset + s.log.length);
    if (this.boundaries.length > STREAM_WINDOW_TURNS) {
      const upTo = this.boundaries.shift();
      if (upTo !== undefined) this.stream.truncate(upTo);
    }
  }

  /** No new poll is admitted and waiting ones answer with what they have: the run is about to close or continue as new. */
  detach(): void {
    this.stream.detachPollers();
  }

  /** What continue-as-new hands the next execution: the window, its offsets and the publishers' dedup marks. */
  carried(): CarriedStream {
    return { state: this.state(), boundaries: [...this.boundaries] };
  }

  /** The items on topic `events` from `fromOffset` (or the window's start, if that was dropped). */
  private window(fromOffset: number): StreamWindow {
    const s = this.state();
    const items: RunStreamItem[] = [];
    s.log.forEach((item, i) => {
      const offset = s.base_offset + i;
      if (item.topic !== EVENTS_TOPIC || offset < fromOffset) return;
      items.push({ ...wf.defaultPayloadConverter.fromPayload<StreamEvent>(decodePayloadWire(item.data)), offset });
    });
    return { items, end: s.base_offset + s.log.length };
  }

  /** The library's snapshot (it encodes the window, which is bounded). */
  private state(): WorkflowStreamState {
    return this.stream.getState();
  }
}
