// The cluster's fault switches, for test files: the global setup owns the
// cluster's processes (so it can tear every one of them down), and a test in
// its own fork asks it over loopback HTTP to crash one (test/cluster/faults.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SERVICES, type ServiceName, type TemporalCluster } from '../../dev/cluster/cluster.js';

/** POST /service/<name>/kill | /service/<name>/start | /postgres/crash | /postgres/start; GET /service/<name> answers its pid. */
export async function startClusterControl(cluster: TemporalCluster): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const [, what, name, action] = (req.url ?? '').split('/');
    const act = async (): Promise<unknown> => {
      if (what === 'postgres' && name === 'crash' && req.method === 'POST') return cluster.postgres.crash();
      if (what === 'postgres' && name === 'start' && req.method === 'POST') return cluster.postgres.start();
      if (what !== 'service' || !SERVICES.includes(name as ServiceName)) throw new Error(`no such switch: ${req.method} ${req.url}`);
      const service = name as ServiceName;
      if (req.method === 'GET' && action === undefined) return { pid: cluster.pid(service) };
      if (req.method === 'POST' && action === 'kill') return cluster.killService(service);
      if (req.method === 'POST' && action === 'start') return cluster.startService(service);
      throw new Error(`no such switch: ${req.method} ${req.url}`);
    };
    act().then(
      (r) => answer(200, r ?? { ok: true }),
      (e: unknown) => answer(400, { error: e instanceof Error ? e.message : String(e) }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
