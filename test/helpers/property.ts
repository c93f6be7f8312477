// fast-check's settings for the suite's properties over pure code, in one
// place. A property runs its own number of cases (300 unless it says);
// PROPERTY_RUNS=N runs every property N times instead, and PROPERTY_SEED=<seed>
// (fast-check prints it with a failure) replays the failing case.
// The end-to-end properties on a real server (resume chains, hard-budget
// trees, interleavings) size themselves with variables of their own: each case
// is a run of seconds, not microseconds.
export interface PropertyParams {
  numRuns: number;
  seed?: number;
}

const envNumber = (name: string): number | undefined => {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(v)}`);
  return n;
};

/** The cases and seed for one property: `runs` unless PROPERTY_RUNS says otherwise, and PROPERTY_SEED's seed when set. */
export function propertyParams(runs = 300): PropertyParams {
  const seed = envNumber('PROPERTY_SEED');
  return { numRuns: envNumber('PROPERTY_RUNS') ?? runs, ...(seed === undefined ? {} : { seed }) };
}
