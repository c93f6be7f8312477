// What the CLI refuses before it does anything: a bad command line (exit 2,
// the usage code) or a request the run's state rules out (exit 1).

/** A bad command line: a flag, a value, a missing argument. */
export class UsageError extends Error {}

/** A well-formed request that cannot be done, such as resuming a completed run. */
export class Refusal extends Error {}
