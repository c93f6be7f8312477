// What the fleet benches (./decisions.ts, ./decision-shapes.ts, ./parked.ts)
// share: starting or deciding many runs with a bound on those in flight,
// waiting for the server to say they are all somewhere, and the
// min / median / max of their rounds.

/** Runs `fn` over 0..n-1 with at most `width` in flight. */
export async function pool(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) await fn(next++);
  }));
}

/** Polls `probe` every 250 ms until it says yes; 30 minutes at most (a fleet of 10,000 on 2 cores takes ~15). */
export async function until(what: string, probe: () => Promise<boolean>, onTick?: () => void): Promise<void> {
  const deadline = Date.now() + 30 * 60_000;
  while (!(await probe())) {
    onTick?.();
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** "min / median / max" of a row's rounds, one decimal. */
export function spread(xs: readonly number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(1)} / ${s[Math.floor(s.length / 2)].toFixed(1)} / ${s[s.length - 1].toFixed(1)}`;
}
