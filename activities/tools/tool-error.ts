/**
 * A failure the tool reports to the model rather than to Temporal. `permanent`
 * marks errors no rewording can fix (a policy refusal): the loop stops the run
 * instead of letting the model retry until the cap.
 */
export class ToolError extends Error {
  constructor(
    message: string,
    /** No rewording can fix it: the run stops instead of the model retrying. Default false. */
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/**
 * Thrown by a write that failed before it changed anything (a missing file, a
 * server it could not reach, a Stop that came first): the claim on the call's
 * key is released, so a retry may act, and `reason` goes on as if a read-only
 * tool had thrown it (a ToolError reaches the model, anything else is retried
 * by Temporal). Any other failure of a write after it started leaves the
 * outcome unknown, and nobody acts on it blind.
 */
export class NothingChanged extends Error {
  constructor(
    /** What went wrong: passed on as the tool's failure (a ToolError reaches the model). */
    readonly reason: unknown,
  ) {
    super(reason instanceof Error ? reason.message : String(reason));
    this.name = 'NothingChanged';
  }
}
