// The model's text as it arrives, published on the run's live stream (topic
// `events`, workflows/run-stream.ts) from inside the model activity: each batch
// is one signal to the run (one Temporal Action, one history event), sent by
// @temporalio/workflow-streams with a publisher id and sequence so a retried
// send is not appended twice.
//
// Batching: an attempt's first delta goes out at once (what a watching person
// waits for is the first word), later deltas are joined and sent every
// TOKEN_BATCH_MS. 200 ms is five updates a second, smoother than reading
// needs, and bounds a long reply's signals to five a second of generation;
// a reply that arrives faster than that (the scripted provider's) costs one
// signal for its first delta and one with the rest and its end.
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { TokenAttempt, TokenSink, TokenStream } from '../common/token-sink.js';
import type { StreamTokenEnd, StreamTokenText } from '../common/stream-items.js';

export const TOKEN_BATCH_MS = 200;

/** How long an attempt's end waits for its last batch to be accepted before it lets the model call finish anyway. */
const CLOSE_WAIT_MS = 5_000;

export interface StreamTokenSinkOptions {
  /** Milliseconds between batches after an attempt's first delta (default TOKEN_BATCH_MS). */
  batchMs?: number;
}

/**
 * A TokenSink that publishes on the live stream of the run the model activity
 * belongs to. Must be opened inside the model activity (it signals the
 * activity's own workflow through the worker's client).
 */
export function streamTokenSink(options: StreamTokenSinkOptions = {}): TokenSink {
  const batchMs = options.batchMs ?? TOKEN_BATCH_MS;
  return { open: (call) => new PublishedAttempt(call, batchMs) };
}

class PublishedAttempt implements TokenStream {
  private readonly client: WorkflowStreamClient | null;
  private pending = '';
  private sentAny = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly call: TokenAttempt,
    private readonly batchMs: number,
  ) {
    // Outside an activity (a caller's own sink test) there is no run to publish on: nothing is streamed.
    this.client = safely(() => WorkflowStreamClient.fromWithinActivity({ batchInterval: batchMs }));
  }

  text(delta: string): void {
    if (!this.client || delta === '') return;
    this.pending += delta;
    if (!this.sentAny) {
      this.sentAny = true;
      this.send(true);
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.send(true), this.batchMs);
    }
  }

  async close(outcome: 'counted' | 'failed' | 'stopped'): Promise<void> {
    const client = this.client;
    if (!client) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.send(false);
    const end: StreamTokenEnd = { type: 'token_end', turn: this.call.turn, attempt: this.call.attempt, outcome };
    client.topic<StreamTokenEnd>('events').publish(end);
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
    });
    try {
      // Disposing stops the client's background flusher after sending what is left.
      await Promise.race([client[Symbol.asyncDispose](), gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Publishes what is pending as one item; `now`: wake the flusher instead of waiting for its interval. */
  private send(now: boolean): void {
    this.timer = null;
    if (!this.client || this.pending === '') return;
    const item: StreamTokenText = { type: 'token', turn: this.call.turn, attempt: this.call.attempt, text: this.pending };
    this.pending = '';
    this.client.topic<StreamTokenText>('events').publish(item, { forceFlush: now });
  }
}

function safely<T>(make: () => T): T | null {
  try {
    return make();
  } catch {
    return null;
  }
}
