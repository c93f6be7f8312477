// The dev server's Prometheus endpoint (`temporal server start-dev
// --metrics-port N`), read for what a run costs the frontend: the heartbeat
// RPCs an activity sent. Counters only grow, so a figure is the difference
// between two reads around what is measured.

/**
 * The requests workers sent for this operation: `service_requests` of the
 * frontend service, every namespace. The history service counts the same
 * request again under its own service_name (one process runs both on the dev
 * server), so summing every series would double the figure.
 */
export async function serviceRequests(metricsUrl: string, operation: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('service_requests{') || !line.includes(`operation="${operation}"`) || !line.includes('service_name="frontend"')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

export const HEARTBEAT_OPERATION = 'RecordActivityTaskHeartbeat';

/**
 * A metrics read once it stopped moving: the server reports its metrics a
 * little after the requests (up to about a second here), so a read right
 * after a call can miss its last ones and count them in the next measurement.
 */
async function untilStill<T>(read: () => Promise<T>): Promise<T> {
  let last = await read();
  for (;;) {
    await new Promise((r) => setTimeout(r, 1500));
    const now = await read();
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
}

/** The requests counter of `operation` once it stopped moving. */
export function settled(metricsUrl: string, operation: string): Promise<number> {
  return untilStill(() => serviceRequests(metricsUrl, operation));
}

/** Heartbeat RPCs the server received while `during` ran. */
export async function heartbeatsDuring<T>(metricsUrl: string, during: () => Promise<T>): Promise<{ value: T; heartbeats: number }> {
  const before = await settled(metricsUrl, HEARTBEAT_OPERATION);
  const value = await during();
  const after = await settled(metricsUrl, HEARTBEAT_OPERATION);
  return { value, heartbeats: after - before };
}

/**
 * The server's own count of billable Actions (`action{service_name="frontend"}`,
 * by `action_type`), which Temporal documents for estimating a Cloud bill
 * from a self-hosted server. It differs from Cloud's rules in one place we
 * know of: it counts the SDK's `TemporalChangeVersion` upserts (a patch's),
 * which Cloud exempts.
 */
export async function serverActions(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const byType: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('action{') || !line.includes('service_name="frontend"')) continue;
    const type = /action_type="([^"]*)"/.exec(line)?.[1] ?? 'unknown';
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) byType[type] = (byType[type] ?? 0) + value;
  }
  return byType;
}

export interface ServerActions {
  total: number;
  /** e.g. `command_ScheduleActivityTask: 20`, `command_BatchMarkers: 21`. */
  byType: Record<string, number>;
}

/** The server's Action counter across `during`, read once it stopped moving on both sides (nothing else may run meanwhile). */
export async function serverActionsDuring<T>(metricsUrl: string, during: () => Promise<T>): Promise<{ value: T; actions: ServerActions }> {
  const before = await untilStill(() => serverActions(metricsUrl));
  const value = await during();
  const after = await untilStill(() => serverActions(metricsUrl));
  const byType: Record<string, number> = {};
  let total = 0;
  for (const [type, n] of Object.entries(after)) {
    const d = n - (before[type] ?? 0);
    if (d === 0) continue;
    byType[type.replace(/^(command|grpc)_/, '')] = d;
    total += d;
  }
  return { value, actions: { total, byType } };
}
