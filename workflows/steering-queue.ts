// Durable steering: a person's message for a running agent ("not that folder,
// look in logs/"), sent by the `steer` update or signal, queued in the
// workflow's state and put into the transcript at the next turn boundary —
// after every call of the last reply has its result, before the model is
// asked again — so the protocol's rule (a call's result follows its call) is
// never broken. The queue is plain JSON: it survives a worker crash (replayed
// from the signals in history) and crosses continue-as-new in the carried state.
//
// When a message counts. A signal can reach the workflow in the same
// activation as the event that brings the loop to a boundary, or (a worker
// that ran ahead of history) in the activation after it; applied as soon as
// it is seen, a replay could put it one turn earlier than the first execution
// did. So a message is taken at a boundary only if it arrived in an earlier
// workflow task (`task` < the history length now): the same turn on every
// path. An interrupt acts where the loop waits (a call parked on an
// approval), which both paths reach; once it has acted it is due at once.
//
// Pure: no Temporal import (./steering.ts passes the history length and the time).
import type { ChatMessage, SteerView } from '../common/contract.js';
import type { SteerInput } from '../common/run-messages.js';
import { payloadProblem, steerSchema } from '../common/signal-schemas.js';

export interface QueuedSteer extends SteerView {
  /** The history length of the workflow task it arrived in; 0 when carried from an earlier execution. */
  task: number;
  /** An interrupt that rejected the call the run was parked on: due at the boundary that follows. */
  acted?: boolean;
}

export { MAX_STEER_CHARS } from '../common/signal-schemas.js';

/** Why a steer payload cannot be queued (one line naming the field), or null. */
export function steerInputProblem(input: unknown): string | null {
  return payloadProblem(steerSchema(), input);
}

export class SteeringQueue {
  /** In arrival order. */
  constructor(private readonly queued: QueuedSteer[] = []) {}

  /** Queues a checked payload (see steerInputProblem) that arrived in the workflow task of history length `task`, at workflow time `at`. */
  receive(input: SteerInput, task: number, at: string): QueuedSteer {
    const by = typeof input.by === 'string' && input.by.trim() ? input.by.trim() : null;
    const s: QueuedSteer = { message: input.message, by, at, interrupt: input.interrupt === true, task };
    this.queued.push(s);
    return s;
  }

  get size(): number {
    return this.queued.length;
  }

  /** An interrupt that stops a call of the current reply before it starts: one that already acted, or from an earlier task. */
  interruptNow(task: number): QueuedSteer | null {
    return this.queued.find((s) => s.interrupt && (s.acted === true || s.task < task)) ?? null;
  }

  /** Any interrupt: where the loop waits (a parked call), every path has seen it. */
  anyInterrupt(): QueuedSteer | null {
    return this.queued.find((s) => s.interrupt) ?? null;
  }

  /** Whether a boundary now would take at least one message. */
  hasDue(task: number): boolean {
    return this.lastDue(task) >= 0;
  }

  /**
   * Takes the messages due at a boundary, in arrival order: up to the last
   * one that arrived in an earlier task or is an interrupt that acted
   * (messages before it arrived no later).
   */
  takeDue(task: number): QueuedSteer[] {
    return this.queued.splice(0, this.lastDue(task) + 1);
  }

  /** Everything still queued, taken out (the run ends: none will be applied). */
  takeAll(): QueuedSteer[] {
    return this.queued.splice(0);
  }

  views(): SteerView[] {
    return this.queued.map(({ message, by, at, interrupt }) => ({ message, by, at, interrupt }));
  }

  /** What the next execution carries: every message arrived in an earlier task, from its point of view. */
  carried(): QueuedSteer[] {
    return this.queued.map((s) => ({ ...s, task: 0 }));
  }

  private lastDue(task: number): number {
    for (let i = this.queued.length - 1; i >= 0; i--) {
      const s = this.queued[i];
      if (s.task < task || s.acted === true) return i;
    }
    return -1;
  }
}

/** The transcript's record of a steering message: a user message naming who sent it and when. */
export function steerMessage(s: SteerView): ChatMessage {
  return { role: 'user', content: `Message from ${s.by ?? 'the user'} (sent ${s.at}, while you were working): ${s.message}` };
}
