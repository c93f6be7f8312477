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
 * The counter once it stopped moving: the server reports its metrics a little
 * after the requests (up to about a second here), so a read right after a call
 * can miss its last heartbeats and count them in the next measurement.
 */
export async function settled(metricsUrl: string, operation: string): Promise<number> {
  let last = await serviceRequests(metricsUrl, operation);
  for (;;) {
    await new Promise((r) => setTimeout(r, 1500));
    const now = await serviceRequests(metricsUrl, operation);
    if (now === last) return now;
    last = now;
  }
}

/** Heartbeat RPCs the server received while `during` ran. */
export async function heartbeatsDuring<T>(metricsUrl: string, during: () => Promise<T>): Promise<{ value: T; heartbeats: number }> {
  const before = await settled(metricsUrl, HEARTBEAT_OPERATION);
  const value = await during();
  const after = await settled(metricsUrl, HEARTBEAT_OPERATION);
  return { value, heartbeats: after - before };
}
