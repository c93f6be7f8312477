// What activities add to the run's live stream (topic `events`,
// workflows/run-stream.ts): the model's text as it arrives, and the trace lines
// an activity writes (tool progress, a model attempt's failure). Each batch is
// one signal to the run (one Temporal Action, one history event), sent by
// @temporalio/workflow-streams with a publisher id and sequence, so a retried
// send is not appended twice.
//
// Batching: a publisher's first item goes out at once (what a watching person
// waits for is the first word, the first progress), later items wait up to
// BATCH_MS and go together, text deltas joined into one item. 200 ms is five
// updates a second, smoother than reading needs, and bounds a long reply's
// signals to five a second of generation; a reply that arrives faster than that
// (the scripted provider's) costs two signals: its first delta, then the rest
// with its end. A local activity (a fast read-only tool) publishes nothing:
// the library cannot signal from one.
import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { TraceEntry } from '../node/trace-format.js';
import type { TokenAttempt, TokenSink, TokenStream } from '../node/token-sink.js';
import type { StreamTokenEnd, StreamTokenText } from '../common/stream-items.js';

/** How long a live stream's later items wait to go out together, in ms (the first goes at once). */
export const BATCH_MS = 200;

/** How long a publisher's end waits for its last batch to be accepted before it lets the activity finish anyway. */
const CLOSE_WAIT_MS = 5_000;

/** Publishes one activity's items on its run's stream; every method is quiet: the stream never fails the activity. */
export class LivePublisher {
  private readonly client: WorkflowStreamClient | null;
  private text: { turn: number; attempt: number; pending: string } | null = null;
  private sentAny = false;
  private timer: NodeJS.Timeout | null = null;

  /** Only inside a (non-local) activity; elsewhere it publishes nothing. */
  constructor(private readonly batchMs = BATCH_MS) {
    this.client = quietly(() => (Context.current().info.isLocal ? null : WorkflowStreamClient.fromWithinActivity({ batchInterval: batchMs })), null);
  }

  /** A trace line an activity wrote (it carries the seq of the workflow event it hangs under). */
  line(entry: TraceEntry): void {
    this.flushText();
    this.publish(entry);
  }

  /** A delta of a model attempt's reply text: joined with the deltas that arrive before the next batch. */
  tokens(turn: number, attempt: number, delta: string): void {
    if (!this.client || delta === '') return;
    if (this.text) this.text.pending += delta;
    else this.text = { turn, attempt, pending: delta };
    if (!this.sentAny) this.flushText();
    else this.timer ??= setTimeout(() => this.flushText(), this.batchMs);
  }

  /** Whether anything was published (or is pending): a publisher that had nothing to say sends nothing at its close. */
  get used(): boolean {
    return this.sentAny || this.text !== null;
  }

  /** Sends what is left and stops the client's flusher; resolves when the server took it, or after CLOSE_WAIT_MS. */
  async close(last?: object): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.flushText();
    if (last) this.publish(last, false);
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
    });
    try {
      await Promise.race([client[Symbol.asyncDispose]().catch(() => undefined), gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  private flushText(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const t = this.text;
    this.text = null;
    if (!t) return;
    const item: StreamTokenText = { type: 'token', turn: t.turn, attempt: t.attempt, text: t.pending };
    this.publish(item);
  }

  /** `now`: wake the flusher for the first item, else leave it to the batch interval. */
  private publish(item: object, now = !this.sentAny): void {
    if (!this.client) return;
    this.sentAny = true;
    quietly(() => this.client?.topic('events').publish(item, { forceFlush: now }), undefined);
  }
}

/**
 * A TokenSink that publishes each attempt's text on the live stream of the run
 * the model activity belongs to, ended by a `token_end` item with the
 * attempt's outcome (when it streamed any); the attempt's failure line goes on it too.
 */
export function streamTokenSink(options: { batchMs?: number } = {}): TokenSink {
  return {
    // A run nobody reads costs no signal: the workflow says whether a reader is attached when it sends the call.
    onlyWhileWatched: true,
    open: (call: TokenAttempt): TokenStream => {
      const publisher = new LivePublisher(options.batchMs);
      return {
        text: (delta) => publisher.tokens(call.turn, call.attempt, delta),
        line: (entry) => publisher.line(entry),
        // An attempt that streamed no text (a reply of tool calls only) ends without a word: it costs no signal.
        close: (outcome) => {
          const end: StreamTokenEnd = { type: 'token_end', turn: call.turn, attempt: call.attempt, outcome };
          return publisher.close(publisher.used ? end : undefined);
        },
      };
    },
    // Nobody watching: the attempt's events still go out (a late reader reads every event), its text does not.
    openLines: (): TokenStream => {
      const publisher = new LivePublisher(options.batchMs);
      return { text: () => undefined, line: (entry) => publisher.line(entry), close: () => publisher.close(undefined) };
    },
  };
}

function quietly<T>(f: () => T, otherwise: T): T {
  try {
    return f();
  } catch {
    return otherwise;
  }
}
