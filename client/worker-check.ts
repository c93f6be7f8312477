// "No worker" is an answer: a query or an update needs a worker to take the
// run's task, and with none the server holds the call (an update until a
// worker comes back, which then applies it behind the operator's back). So the
// commands that need a worker look at the pollers of the run's task queue
// first (node/queue-pollers.ts says what "polls now" means) and say in one
// line when none polls, and the updates they do send wait a bounded time.
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { setMaxListeners } from 'node:events';
import { queuePollers } from '../node/queue-pollers.js';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes.js';

/** Who polls a task queue's workflow tasks, as the server remembers it. */
export interface QueueWorkers {
  /** The queue asked about. */
  taskQueue: string;
  /** A worker polls the queue's workflow tasks now. */
  polling: boolean;
  /** Seconds since the most recent poll the server remembers (about the last 5 minutes), or null: none. */
  lastSeenSecondsAgo: number | null;
}

/** Who polls the queue's workflow tasks (those are what a query, an update and a run's start wait on). */
export async function queueWorkers(c: Client, taskQueue: string): Promise<QueueWorkers> {
  const pollers = await queuePollers(c, c.options.namespace, taskQueue, ['workflow']);
  const ages = pollers.map((p) => p.secondsAgo);
  return { taskQueue, polling: pollers.some((p) => p.live), lastSeenSecondsAgo: ages.length ? Math.min(...ages) : null };
}

/** The run as Temporal knows it without a worker, and who polls its queue. */
export async function runWorkers(c: Client, workflowId: string): Promise<{ description: WorkflowExecutionDescription; workers: QueueWorkers }> {
  const description = await c.workflow.getHandle(workflowId).describe();
  return { description, workers: await queueWorkers(c, description.taskQueue) };
}

/** `no worker polls task queue X (the last one was seen 95 s ago)`. */
export function noWorkerLine(w: QueueWorkers): string {
  const last = w.lastSeenSecondsAgo === null ? 'none seen in the last 5 minutes' : `the last one polled ${w.lastSeenSecondsAgo} s ago`;
  return `no worker polls task queue ${w.taskQueue} (${last})`;
}

/**
 * What the server holds for a run without asking a worker: its execution
 * status and the Agent* search attributes (as of the run's last status change).
 */
export interface RunDescription {
  /** The run's workflow id. */
  workflowId: string;
  /** The Temporal run id of the execution described. */
  runId: string;
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT. */
  temporalStatus: string;
  /** The task queue it runs on. */
  taskQueue: string;
  /** ISO 8601. */
  startTime: string;
  /** ISO 8601, once the execution has closed. */
  closeTime?: string;
  /** Events in its history. */
  historyLength: number;
  /** The Agent* search attributes set on the run (AgentStatus, AgentAwaitingCallId, …), dates as ISO 8601. */
  searchAttributes: Record<string, string | number | boolean>;
}

/** The run as Temporal knows it without a worker, for `status` when no worker can answer the query. */
export function withoutWorker(d: WorkflowExecutionDescription): RunDescription {
  const attributes: RunDescription['searchAttributes'] = {};
  for (const name of Object.keys(SEARCH_ATTRIBUTES)) {
    const v = d.searchAttributes?.[name]?.[0];
    if (v !== undefined) attributes[name] = v instanceof Date ? v.toISOString() : v;
  }
  return {
    workflowId: d.workflowId,
    runId: d.runId,
    temporalStatus: d.status.name,
    taskQueue: d.taskQueue,
    startTime: d.startTime.toISOString(),
    ...(d.closeTime ? { closeTime: d.closeTime.toISOString() } : {}),
    historyLength: d.historyLength,
    searchAttributes: attributes,
  };
}

/** How long a command waits for a worker's answer to an update it sent, before it says so and ends. */
export const ANSWER_WAIT_MS = 20_000;

/**
 * How long a decision waits for a worker to accept its update before it is
 * recorded as its signal: a live worker accepts in well under a second (one
 * workflow task); one just killed, still listed as a poller, never does.
 */
export const ACCEPT_WAIT_MS = 5_000;

/** Requests one bounded answer may make (an update's polls) before Node warns of a listener leak. */
const MAX_REQUESTS_PER_ANSWER = 1_000;

/** The update's answer, or 'no-answer' once `ms` pass: the call is then cancelled (the update itself may still apply). */
export async function boundedAnswer<T>(c: Client, ms: number, call: () => Promise<T>): Promise<T | 'no-answer'> {
  const abort = new AbortController();
  // Every gRPC request under the signal adds an abort listener the SDK never
  // removes, and an update long-polls again and again until answered: a slow
  // answer passed Node's default of 10 and warned of a leak that is not one
  // (the signal and its listeners go when the call ends). Bounded all the same.
  setMaxListeners(MAX_REQUESTS_PER_ANSWER, abort.signal);
  const timer = setTimeout(() => abort.abort(), ms);
  try {
    return await c.withAbortSignal(abort.signal, call);
  } catch (err) {
    if (abort.signal.aborted) return 'no-answer';
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
