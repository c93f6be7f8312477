// Parameter schemas several tools share, as literals (`as const`): what the
// model is shown and runs record, and what ./args-of reads the argument types
// from. A change here changes every run's recorded tool specs.

/** The schema of a tool argument that names a file: a path relative to the workspace. */
export const PATH_ARG = { type: 'string', minLength: 1, maxLength: 512, description: 'A path relative to the workspace.' } as const;

/** The parameters of a tool whose one argument is such a path (read_file, delete_file). */
export const PATH_ONLY = { type: 'object', properties: { path: PATH_ARG }, required: ['path'], additionalProperties: false } as const;

/** The parameters of a tool that takes no arguments. */
export const NO_ARGS = { type: 'object', properties: {}, required: [], additionalProperties: false } as const;
