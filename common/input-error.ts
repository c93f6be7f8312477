// The error every input check throws: the field, and what is wrong with it.
export class InputError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`invalid input: ${field} ${problem}`);
    this.name = 'InputError';
  }
}
