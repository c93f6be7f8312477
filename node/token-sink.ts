// Where a model activity hands the reply's text as it arrives. The model
// activity (activities/model.ts) opens one TokenStream per attempt and writes
// each text delta; the worker's sink (the run's live stream, topic `events`)
// decides how to batch and publish them. Kept apart from both so the model
// backends and the stream can change without touching each other.

import type { TraceEntry } from './trace-format.js';

/** The attempt a stream of tokens belongs to: a retried attempt's tokens are told apart by `attempt`. */
export interface TokenAttempt {
  /** The run's workflow id. */
  workflowId: string;
  /** The model turn (1-based) this call is for. */
  turn: number;
  /** Temporal's activity attempt number (1 for the first try). */
  attempt: number;
}

/** One model call attempt's reply text, as it arrives. */
export interface TokenStream {
  /** One delta of reply text, in arrival order. Never throws; never blocks the call. */
  text(delta: string): void;
  /** A trace line of this attempt (its failure), for a sink that publishes them beside the text; optional. */
  line?(entry: TraceEntry): void;
  /**
   * The attempt ended. `counted`: its reply is the turn's reply; `failed`: it
   * will be retried or the run fails (subscribers drop its tokens); `stopped`:
   * a Stop cut it short (what arrived is what was said). Resolves once what
   * was written is published, or gives up quietly: a stream that cannot be
   * written never fails the model call.
   */
  close(outcome: 'counted' | 'failed' | 'stopped'): Promise<void>;
}

/** Where a worker's model calls send their reply text as it arrives (AgentPlugin `tokens`). */
export interface TokenSink {
  /** A stream for one attempt of one model call; called as the call starts. */
  open(call: TokenAttempt): TokenStream;
  /**
   * The sink writes to the run's own live stream, whose workflow knows whether
   * anyone reads it: a call sent while nobody watches opens no stream, and the
   * workflow publishes the reply's text whole at its end (the live stream's
   * sink sets this; a sink of the team's is always written to).
   */
  readonly onlyWhileWatched?: boolean;
  /**
   * With onlyWhileWatched, for a call sent while nobody watches: a stream
   * that publishes the attempt's trace lines only (a retry, a debug request,
   * a failure: events every reader is promised, rare enough to cost nothing
   * in the common case), no text and no end (the workflow publishes those).
   */
  openLines?(call: TokenAttempt): TokenStream;
}

/** The sink of a worker that streams nothing: model calls are not streamed. */
export const NO_TOKENS: TokenSink = {
  open: () => ({ text: () => undefined, close: async () => undefined }),
};
