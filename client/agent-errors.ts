// What AgentClient throws: one class per thing a caller branches on, each
// with the fields a caller (the CLI among them) needs to say what happened in
// its own words, and a message that already says it. The SDK's errors are
// translated here, in one place, so no call site reads a server's wording.
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { noWorkerLine, type QueueWorkers } from './worker-check.js';

/** The base of every error AgentClient throws for a reason of its own (a connection failure reaches the caller as the SDK throws it). */
export class AgentClientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No run has this workflow id (or this run id of it) on the namespace. */
export class RunNotFoundError extends AgentClientError {
  constructor(
    /** The workflow id asked for. */
    readonly workflowId: string,
    /** The Temporal run id asked for, when one was. */
    readonly runId: string | undefined,
    options?: { cause?: unknown; detail?: string },
  ) {
    super(`no such run: ${workflowId}${runId ? ` (run id ${runId})` : ''}${options?.detail ? `: ${options.detail}` : ''}`, options);
  }
}

/** The run has ended: a signal, an update or a cancel can no longer reach it. `cause` is the server's refusal. */
export class RunAlreadyFinishedError extends AgentClientError {
  constructor(
    /** The run's workflow id. */
    readonly workflowId: string,
    options?: { cause?: unknown },
  ) {
    super(`run ${workflowId} has already finished: a signal or an update can no longer reach it (its result: AgentRunHandle.result())`, options);
  }
}

/** A run with this workflow id is already running: start it under another id, or take it with getHandle. */
export class RunAlreadyStartedError extends AgentClientError {
  constructor(
    /** The workflow id asked for. */
    readonly workflowId: string,
    options?: { cause?: unknown },
  ) {
    super(`a run with workflow id ${workflowId} is already running: choose another workflow id, or getHandle(${JSON.stringify(workflowId)}) to drive it`, options);
  }
}

/**
 * No worker polls the run's task queue, so nothing was sent: a query or an
 * update needs a worker, and an update the server held would apply whenever
 * one came back, unseen by the caller. The decision can be recorded durably
 * instead as its signal (`AgentRunHandle.signals`).
 */
export class NoWorkerError extends AgentClientError {
  constructor(
    /** The run's workflow id. */
    readonly workflowId: string,
    /** What was not sent: the update's or the query's name (`decide`, `status`). */
    readonly what: string,
    /** The queue and the last poll the server remembers. */
    readonly workers: QueueWorkers,
  ) {
    super(`${noWorkerLine(workers)}, so the ${what} ${what === 'status' || what === 'transcript' || what === 'config' ? 'query' : 'update'} was not sent to ${workflowId}; start a worker on ${workers.taskQueue} and try again`);
  }
}

/**
 * The query or update was sent and no worker answered within the wait
 * (AgentClientOptions.answerTimeoutMs). An update may still apply when a
 * worker takes the run: read its status before sending it again.
 */
export class NoAnswerError extends AgentClientError {
  constructor(
    /** The run's workflow id. */
    readonly workflowId: string,
    /** The update's or the query's name. */
    readonly what: string,
    /** The run's task queue. */
    readonly taskQueue: string,
    /** How long the client waited, in ms. */
    readonly waitedMs: number,
  ) {
    super(`sent the ${what} to ${workflowId}, but no worker answered within ${waitedMs / 1000} s (task queue ${taskQueue}); it may still apply when a worker takes the run`);
  }
}

/**
 * A decision (approve, reject) that no worker took within the wait, recorded
 * durably instead: sent as the signal of the same name (`via: 'signal'`), or
 * already accepted by the run as the update (`via: 'update'`, in its history)
 * with its answer not back in time. Either way it is in the run's history and
 * pending: the run applies it when a worker takes the run, or refuses it
 * (the call no longer awaiting, another decision first) and writes
 * `signal_ignored` to the trace. The first decision is final, so the update
 * the server may still hold cannot apply beside the signal.
 */
export class DecisionPendingError extends AgentClientError {
  constructor(
    /** The run's workflow id. */
    readonly workflowId: string,
    /** What was recorded: `approve c2`, `reject c2`. */
    readonly what: string,
    /** The signal it was recorded as (`approve`, `reject`), or `update` when the run had accepted the update. */
    readonly via: 'approve' | 'reject' | 'update',
    /** The run's task queue. */
    readonly taskQueue: string,
    /** How long the client waited for a worker to take it, in ms. */
    readonly waitedMs: number,
  ) {
    super(
      via === 'update'
        ? `recorded ${what} for ${workflowId}, pending: the run accepted it (in its history) but no worker finished it within ${waitedMs / 1000} s (task queue ${taskQueue}); the run applies it when a worker takes the run`
        : `recorded ${what} for ${workflowId} as the ${via} signal, pending: no worker took it within ${waitedMs / 1000} s (task queue ${taskQueue}); the run applies or refuses it when a worker takes the run (see its trace)`,
    );
  }
}

/**
 * The run refused an update: its validator (the call is not awaiting a
 * decision, the budget is not higher, the message is empty...) or its
 * handler (the state moved between the two). `reason` is the run's own
 * sentence; nothing changed in the run.
 */
export class UpdateRefusedError extends AgentClientError {
  constructor(
    /** The run's workflow id. */
    readonly workflowId: string,
    /** The update's name (`decide`, `steer`, `raiseBudget`, `reconcile`). */
    readonly update: string,
    /** Why, in the run's words. */
    readonly reason: string,
    /** The refusal's failure type: `UpdateRefused` (validator), `DecisionRefused` (a decision refused as it was applied). */
    readonly type: string,
    options?: { cause?: unknown },
  ) {
    super(`${update} refused by ${workflowId}: ${reason}`, options);
  }
}

/**
 * The run failed as a workflow, so it has no result object: bad input, a
 * refused resume or fork, a termination. (A run that ends `failed` in the
 * loop returns a RunResult with `status: 'failed'` instead.)
 */
export class RunFailedError extends AgentClientError {
  /** The failure's type: `InvalidInput`, `ResumeRefused`, … (`TerminatedFailure`, `WorkflowFailed` for others). */
  readonly errorType: string;
  /** The failure's message. */
  readonly reason: string;
  /** For `InvalidInput`: the input field it names. */
  readonly field: string | undefined;

  constructor(
    /** The run's workflow id. */
    readonly workflowId: string,
    failure: WorkflowFailedError,
  ) {
    const cause = failure.cause;
    const reason = cause?.message ?? failure.message;
    super(`run ${workflowId} failed: ${reason}`, { cause: failure });
    this.errorType = cause instanceof ApplicationFailure ? (cause.type ?? 'ApplicationFailure') : (cause?.name ?? 'WorkflowFailed');
    this.reason = reason;
    const field = cause instanceof ApplicationFailure ? (cause.details?.[0] as { field?: unknown } | undefined)?.field : undefined;
    this.field = typeof field === 'string' ? field : undefined;
  }
}

/**
 * The input or options given are refused before anything starts: `field`
 * names what to change (as OptionNames name it), `message` says why.
 */
export class InvalidInputError extends AgentClientError {
  constructor(
    message: string,
    /** The input field at fault (`limits.maxTurns`), when one is. */
    readonly field: string | null,
  ) {
    super(message);
  }
}

/** The run cannot be resumed as it stands (still running, completed, failed for good): the message says why. */
export class CannotResumeError extends AgentClientError {
  constructor(
    message: string,
    /** The run it would resume. */
    readonly workflowId: string,
  ) {
    super(message);
  }
}

/** The text of an error and of its cause, for the server's wordings that only the text tells apart. */
const textOf = (err: Error): string => `${err.message} ${String((err as { cause?: unknown }).cause ?? '')}`;

/** The server answers "not found" for a run that has finished too: its words tell the two apart. */
const FINISHED = /already completed|already finished|workflow execution already/i;

/** The SDK's error as ours when it is one a caller branches on; anything else (a connection failure) as it was. */
export function translated(err: unknown, workflowId: string, runId?: string, update?: string): unknown {
  if (err instanceof AgentClientError || !(err instanceof Error)) return err;
  if (err instanceof WorkflowExecutionAlreadyStartedError) return new RunAlreadyStartedError(err.workflowId, { cause: err });
  if (err instanceof WorkflowFailedError) return new RunFailedError(workflowId, err);
  if (err instanceof WorkflowUpdateFailedError) {
    const c = err.cause;
    const type = c instanceof ApplicationFailure ? (c.type ?? 'ApplicationFailure') : (c?.name ?? 'UpdateFailed');
    return new UpdateRefusedError(workflowId, update ?? 'update', c?.message ?? err.message, type, { cause: err });
  }
  if (FINISHED.test(textOf(err))) return new RunAlreadyFinishedError(workflowId, { cause: err });
  if (err instanceof WorkflowNotFoundError) return new RunNotFoundError(err.workflowId || workflowId, err.runId ?? runId, { cause: err });
  return err;
}

/** Runs `call`, throwing what it throws as translated. */
export async function translating<T>(workflowId: string, runId: string | undefined, call: () => Promise<T>, update?: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw translated(err, workflowId, runId, update);
  }
}
