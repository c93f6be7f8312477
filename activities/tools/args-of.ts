// The type of a tool's arguments, read from its JSON schema at compile time:
// the schema stays the literal the model is shown and runs record (byte for
// byte), and `run` gets typed arguments from it instead of `String(args.x)`.
// Only the keywords the tools use are read; anything else types as unknown.

/** The arguments an object schema describes; a schema known only at run time (an MCP tool's) gives Record<string, unknown>. */
export type ArgsOf<S> = S extends { properties: infer P extends Record<string, unknown> }
  ? string extends keyof P
    ? Record<string, unknown>
    : Flat<{ [K in keyof P & RequiredOf<S>]: ValueOf<P[K]> } & { [K in Exclude<keyof P, RequiredOf<S>>]?: ValueOf<P[K]> }>
  : Record<string, unknown>;

/** The names an object schema's `required` lists (never when it has none). */
export type RequiredOf<S> = S extends { required: readonly (infer R)[] } ? R : never;

/** One property's value: its enum, else its type. */
export type ValueOf<P> = P extends { enum: readonly (infer E)[] }
  ? E
  : P extends { type: 'string' }
    ? string
    : P extends { type: 'number' | 'integer' }
      ? number
      : P extends { type: 'boolean' }
        ? boolean
        : P extends { type: 'null' }
          ? null
          : P extends { type: 'array'; items: infer I }
            ? ValueOf<I>[]
            : P extends { type: 'array' }
              ? unknown[]
              : P extends { type: 'object' }
                ? ArgsOf<P>
                : unknown;

/** `T` with its intersections merged into one object type, so an editor shows the arguments as one object. */
export type Flat<T> = { [K in keyof T]: T[K] };
