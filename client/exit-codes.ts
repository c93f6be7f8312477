// The CLI's exit code tells the five exits apart, so scripts can branch on them.
import type { ExitStatus } from '../common/contract.js';

export const EXIT_CODES: Record<ExitStatus, number> = {
  completed: 0,
  failed: 1,
  max_turns_exceeded: 3,
  budget_exceeded: 4,
  interrupted: 5,
};

/** Bad command line or unreachable server. */
export const USAGE_ERROR = 2;

/** No run with that id (or no trace for it). */
export const NOT_FOUND = 6;

/** The run has already finished: a signal, update or cancel can no longer reach it. */
export const ALREADY_FINISHED = 7;

/** No worker took the command's task: not sent, or sent with no answer in time (the line says which). */
export const NO_WORKER = 8;

/**
 * Recorded, pending: the decision is in the run's history (as its signal, or
 * as an update the run accepted) and no worker has taken it yet; the run
 * applies it, or refuses it in its trace, when a worker takes the run.
 */
export const RECORDED_PENDING = 9;
