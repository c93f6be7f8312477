// What a cluster test file calls to crash part of the shared cluster
// (test/cluster/control-server.ts does it, in the global setup's process).
import { inject } from 'vitest';
import type { ServiceName } from '../../dev/cluster/cluster.js';

async function call(method: 'GET' | 'POST', path: string): Promise<unknown> {
  const res = await fetch(`${inject('clusterControlUrl')}${path}`, { method, signal: AbortSignal.timeout(180_000) });
  const body = (await res.json()) as { error?: string };
  if (!res.ok) throw new Error(`cluster control ${method} ${path}: ${body.error ?? res.status}`);
  return body;
}

/** SIGKILL of one Temporal service process; returns once it is gone. */
export const killService = (s: ServiceName) => call('POST', `/service/${s}/kill`);
/** Starts it again on the same ports and database; returns once it listens. */
export const startService = (s: ServiceName) => call('POST', `/service/${s}/start`);
export const servicePid = async (s: ServiceName) => ((await call('GET', `/service/${s}`)) as { pid: number | null }).pid;
/** PostgreSQL stopped as a crash would (SIGQUIT: no checkpoint); returns once it is gone. */
export const crashPostgres = () => call('POST', '/postgres/crash');
/** PostgreSQL started again on its data (crash recovery); returns once it accepts connections. */
export const startPostgres = () => call('POST', '/postgres/start');
