// The marker a worker's codec puts where a payload could not be decoded
// (node/payload-codec.ts, UndecodablePolicy `refuse`): a signal, an update,
// a query, a start or continue-as-new input, a child's result that is not the
// gzip it says, names a key this worker lacks, fails its tag, unpacks past the
// cap, or is not JSON. Thrown in the codec, it would fail every workflow task
// of the run for good (no query answered, no cancel taken); as a plain value,
// each handler refuses it to its sender, naming why. Anyone may send the
// marker itself as plain JSON: it is refused the same way, which is harmless.
// Pure: bundled with the workflow.

export const UNDECODABLE_KEY = '__undecodable';

export interface UndecodableMarker {
  [UNDECODABLE_KEY]: string;
}

/** The longest reason a marker carries (a key id or an error text can be long). */
const MAX_WHY_CHARS = 300;

export function undecodableMarker(why: string): UndecodableMarker {
  return { [UNDECODABLE_KEY]: why.length > MAX_WHY_CHARS ? `${why.slice(0, MAX_WHY_CHARS)}…` : why };
}

/** Why this value stands for a payload that could not be decoded, as one line naming `what`; null for any other value. */
export function undecodableProblem(value: unknown, what = 'payload'): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const why = (value as Record<string, unknown>)[UNDECODABLE_KEY];
  if (typeof why !== 'string' || Object.keys(value).length !== 1) return null;
  return `the ${what} could not be decoded: ${why}`;
}

/**
 * Why this value cannot be what a run's handler or start reads (a JSON
 * object), when that is cheap to tell: a payload that could not be decoded,
 * or a binary one (`binary/plain` arrives as a Uint8Array, one key per byte:
 * a schema walking 8 MiB of them held the workflow thread past its deadline,
 * and Node then aborted the whole worker). Null for anything else: the
 * handler's own schema judges it.
 */
export function unreadableProblem(value: unknown, what = 'payload'): string | null {
  if (ArrayBuffer.isView(value)) return `the ${what} is ${value.byteLength} bytes of binary data; it must be a JSON object`;
  return undecodableProblem(value, what);
}
