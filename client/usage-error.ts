// What the CLI refuses before it does anything: a bad command line (exit 2,
// the usage code). Refusals of a request the run's state rules out are
// AgentClient's (./agent-errors.ts).

/** A bad command line: a flag, a value, a missing argument. */
export class UsageError extends Error {}
