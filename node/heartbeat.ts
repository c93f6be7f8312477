// How often a running model or tool call heartbeats. Every heartbeat that
// reaches the server is a billed Action on Temporal Cloud (a frontend RPC and
// a mutable-state write on a cluster of your own), so the default is 5 s: at
// most 12 a minute per running call, none for a call shorter than that. A
// Stop reaches a call running in the loop's own worker process at once
// (activities/running-calls.ts); only a call running in another process
// waits for its next heartbeat's answer, so this interval is also the bound
// on that Stop. docs/cost.md has the numbers.

export const DEFAULT_HEARTBEAT_MS = 5000;

/** The least heartbeat timeout a run gets: a shorter one retries live calls on a loaded machine. */
export const MIN_HEARTBEAT_TIMEOUT_MS = 10_000;

/**
 * The heartbeat timeout a worker with this interval gives the runs it starts
 * (recorded in their configuration): twice the interval, so one late
 * heartbeat never fails a live call, and at least MIN_HEARTBEAT_TIMEOUT_MS.
 */
export function heartbeatTimeoutFor(heartbeatEveryMs: number | undefined): number {
  return Math.max(MIN_HEARTBEAT_TIMEOUT_MS, 2 * (heartbeatEveryMs ?? DEFAULT_HEARTBEAT_MS));
}

/**
 * The interval a call uses: the configured one, but at most half its
 * activity's heartbeat timeout, so one late heartbeat (a loaded machine, a
 * GC pause) never times out a live call.
 */
export function heartbeatEvery(configuredMs: number | undefined, heartbeatTimeoutMs: number | undefined): number {
  const every = configuredMs ?? DEFAULT_HEARTBEAT_MS;
  return heartbeatTimeoutMs ? Math.min(every, heartbeatTimeoutMs / 2) : every;
}
