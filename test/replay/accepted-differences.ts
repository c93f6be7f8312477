// Where replaying a saved history on today's code computes another input or
// result than the history recorded, on purpose: each entry names the change
// that caused it and the fixtures it touches. test/replay.test.ts fails on any
// difference not listed here, and on an entry that no longer matches anything
// (so the list only ever holds what is true). A change that alters what runs
// in flight would send or return adds its entry here, reviewed, or is fixed.
import type { Difference } from './compare.js';

export interface AcceptedDifference {
  why: string;
  /** The fixtures (file names without .json) it may occur in. */
  fixtures: RegExp;
  matches(d: Difference): boolean;
}

/**
 * Empty while the saved histories are one generation recorded by the current
 * code (npm run fixtures:record). A deliberate change to what runs record
 * ships as a new pinned build and the histories are recorded again, rather
 * than listed here; an entry is for a difference the project chooses to keep
 * across builds that share histories (a released version's users' runs).
 */
export const ACCEPTED_DIFFERENCES: AcceptedDifference[] = [];

/** The entry that explains this difference in this fixture, if any. */
export function acceptedFor(fixture: string, d: Difference): AcceptedDifference | undefined {
  return ACCEPTED_DIFFERENCES.find((a) => a.fixtures.test(fixture) && a.matches(d));
}
