// What the benchmarks' reports share: order statistics and the commit a figure was measured on.
import { execSync } from 'node:child_process';
import { PROJECT_ROOT } from '../node/project-root.js';

export const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
export const median = (xs: readonly number[]) => sorted(xs)[Math.floor(xs.length / 2)];
/** The p-th percentile (nearest rank). */
export const percentile = (xs: readonly number[], p: number) => sorted(xs)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
/** "min / median / max" with `digits` decimals. */
export const minMedianMax = (xs: readonly number[], digits = 2) => {
  const s = sorted(xs);
  return `${s[0].toFixed(digits)} / ${median(s).toFixed(digits)} / ${s[s.length - 1].toFixed(digits)}`;
};

/** The short commit the figures are of ("unknown" outside a git checkout). */
export function commitOf(): string {
  try {
    return execSync('git rev-parse --short HEAD', { cwd: PROJECT_ROOT }).toString().trim();
  } catch {
    return 'unknown';
  }
}
