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

export class RunStream {
  private readonly stream: WorkflowStream;
  private readonly events;
  private readonly boundaries: number[];

  constructor(prior: CarriedStream | undefined) {
    this.stream = new WorkflowStream(prior?.state);
    this.events = this.stream.topic<TraceEvent>(EVENTS_TOPIC);
    this.boundaries = [...(prior?.boundaries ?? [])];
    wf.setHandler(streamItemsQuery, (fromOffset) => this.window(fromOffset));
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
