// The dev server's Prometheus endpoint (`temporal server start-dev
// --metrics-port N`), read for what a run costs the frontend: the heartbeat
// RPCs an activity sent. Counters only grow, so a figure is the difference
// between two reads around what is measured.

/** The sum of every `service_requests` series of this operation (all namespaces and callers). */
export async function serviceRequests(metricsUrl: string, operation: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('service_requests{') || !line.includes(`operation="${operation}"`)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

export const HEARTBEAT_OPERATION = 'RecordActivityTaskHeartbeat';

/** Heartbeat RPCs the server received while `during` ran. */
export async function heartbeatsDuring<T>(metricsUrl: string, during: () => Promise<T>): Promise<{ value: T; heartbeats: number }> {
  const before = await serviceRequests(metricsUrl, HEARTBEAT_OPERATION);
  const value = await during();
  const after = await serviceRequests(metricsUrl, HEARTBEAT_OPERATION);
  return { value, heartbeats: after - before };
}
