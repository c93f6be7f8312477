// Turns a zod failure into the one line the harness prints: the field's path
// and what is wrong with it. Shared by the input, the MCP config and the
// environment, so every refusal reads the same way.
import { z } from 'zod';

export interface Problem {
  /** Where: `limits.maxTurns`, `forkFrom.transcript[2]`, `` for the value itself. */
  field: string;
  /** What, as the schema's own message says it: `must be a number > 0, got -5`. */
  message: string;
}

/**
 * The problem to report when a value has several. An unknown key comes first:
 * it is usually a typo of a key whose own complaint (missing, default used)
 * would otherwise hide the cause.
 */
export function firstProblem(error: z.ZodError): Problem {
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0];
  const path: PropertyKey[] = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : [...issue.path];
  return { field: fieldPath(path), message: issue.message };
}

/** ['servers', 'x', 'args', 0] -> `servers.x.args[0]`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}

/** A message that names the value given after what it must be: `must be a number > 0, got -5`. */
export const got = (problem: string) => ({ error: (iss: { input?: unknown }) => `${problem}, got ${JSON.stringify(iss.input)}` });

/** A strict object's two messages: not an object at all, or a key it does not know (listed in the shape's order). */
export function objectError(notObject: string, known: readonly string[], unknown = 'is not a known field') {
  return { error: (iss: { code?: string }) => (iss.code === 'unrecognized_keys' ? `${unknown} (known: ${known.join(', ')})` : notObject) };
}

/** An object that refuses keys it does not know: a typo would otherwise leave a default silently in force. */
export function strictObject<S extends z.core.$ZodLooseShape>(shape: S, notObject: string, unknown?: string) {
  return z.strictObject(shape, objectError(notObject, Object.keys(shape), unknown));
}
