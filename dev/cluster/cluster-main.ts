// `npm run cluster`: the compose stack's Temporal cluster, natively, until
// Ctrl-C (docs/cluster.md). Point workers and clients at the address it prints:
//   TEMPORAL_ADDRESS=127.0.0.1:7233 npm run worker
// CLUSTER_PORT: the frontend's port (default 7233; a free one if that is busy).
import { isPortFree } from '../../worker/dev-server/dev-server.js';
import { startCluster } from './cluster.js';

const wanted = Number(process.env.CLUSTER_PORT ?? 7233);
if (!Number.isInteger(wanted) || wanted <= 0 || wanted > 65535) {
  console.error(`CLUSTER_PORT must be a port number, got ${process.env.CLUSTER_PORT}`);
  process.exit(2);
}
const cluster = await startCluster({ frontendPort: (await isPortFree(wanted)) ? wanted : undefined });
console.log(`temporal-server ${cluster.version} (frontend, history, matching, worker) on PostgreSQL ${cluster.postgres.port}`);
console.log(`address ${cluster.address}; logs in ${cluster.dir}; Ctrl-C stops everything`);
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    void cluster.stop().then(() => process.exit(0));
  });
}
