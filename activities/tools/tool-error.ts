// A failure the tool reports to the model rather than to Temporal. `permanent`
// marks errors no rewording can fix (a policy refusal): the loop stops the run
// instead of letting the model retry until the cap.
export class ToolError extends Error {
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}
