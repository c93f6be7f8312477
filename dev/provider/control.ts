// A client for the scripted provider's test-only control routes, used by the
// tests and the experiments: queue a fault, read the request log, count open connections.
import type { FaultRule } from './faults.js';
import type { LoggedRequest, ProviderConnections } from './server.js';
import type { RequestLogStats } from './request-log.js';

const controlUrl = (providerUrl: string, route: string) => providerUrl.replace(/\/v1$/, `/_control/${route}`);

export async function addFault(providerUrl: string, rule: FaultRule): Promise<void> {
  const res = await fetch(controlUrl(providerUrl, 'faults'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  if (!res.ok) throw new Error(`fault not accepted: ${await res.text()}`);
}

/** Ends the faults queued for one marker (a `down` rule included): the provider is back for that run. */
export async function clearFaults(providerUrl: string, taskIncludes: string): Promise<void> {
  const res = await fetch(controlUrl(providerUrl, `faults?taskIncludes=${encodeURIComponent(taskIncludes)}`), { method: 'DELETE' });
  if (!res.ok) throw new Error(`faults not cleared: ${await res.text()}`);
}

/** The logged requests whose task includes the marker; every logged request without one. */
export async function providerRequests(providerUrl: string, taskIncludes?: string): Promise<LoggedRequest[]> {
  const query = taskIncludes ? `?taskIncludes=${encodeURIComponent(taskIncludes)}` : '';
  const res = await fetch(controlUrl(providerUrl, `requests${query}`));
  if (!res.ok) throw new Error(`request log not read: ${res.status} ${await res.text()}`);
  return (await res.json()) as LoggedRequest[];
}

/** How many requests the log holds, their bytes, and how many it dropped to stay within its limits. */
export async function providerLog(providerUrl: string): Promise<RequestLogStats> {
  const res = await fetch(controlUrl(providerUrl, 'log'));
  if (!res.ok) throw new Error(`request log not read: ${res.status} ${await res.text()}`);
  return (await res.json()) as RequestLogStats;
}

/** Requests, streams and sockets the provider has open now: a Stop that closed a stream shows here. */
export async function providerConnections(providerUrl: string): Promise<ProviderConnections> {
  const res = await fetch(controlUrl(providerUrl, 'connections'));
  return (await res.json()) as ProviderConnections;
}
