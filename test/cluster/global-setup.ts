// `npm run test:cluster`: what the compose stack runs, natively — the
// production Temporal server of the compose file's version as four service
// processes on PostgreSQL, brought up by the compose stack's own scripts and
// dynamic config (dev/cluster/cluster.ts) — with the scripted provider and one
// workflow bundle. It provides the same values as test/global-setup.ts, so
// test/helpers/harness.ts and test/helpers/worker-process.ts drive this server unchanged, and
// a switch board to crash parts of it. Everything it starts stops here.
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { startCluster } from '../../dev/cluster/cluster.js';
import { composeServiceEnv } from '../../dev/cluster/compose-file.js';
import { startProvider } from '../../dev/provider/server.js';
import { WORKFLOWS_PATH } from '../../worker/create-worker.js';
import { startClusterControl } from './control-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    clusterControlUrl: string;
    /** The namespace as deploy/compose/create-namespace.sh left it, before any worker ran. */
    namespaceAtSetup: { retentionSeconds: number; searchAttributes: Record<string, string> };
    clusterDir: string;
    /** The cluster's PostgreSQL (the compose file's user and password), for a test that reads what Temporal stored. */
    clusterPostgres: { host: string; port: number; user: string; password: string };
  }
}

const { IndexedValueType } = proto.temporal.api.enums.v1;

export default async function setup(project: TestProject) {
  const started = Date.now();
  // The last run's service logs stay in .data/cluster for a failure's post-mortem.
  const dir = join(PROJECT_ROOT, '.data', 'cluster');
  rmSync(dir, { recursive: true, force: true });
  const cluster = await startCluster({ dir });
  const teardown: (() => Promise<void>)[] = [() => cluster.stop()];
  try {
    console.log(`[cluster] temporal-server ${cluster.version}, 4 service processes, PostgreSQL on ${cluster.postgres.port}: up in ${Math.round((Date.now() - started) / 1000)} s (${cluster.dir})`);
    const conn = await Connection.connect({ address: cluster.address });
    const attrs = await conn.operatorService.listSearchAttributes({ namespace: 'default' });
    const ns = await conn.workflowService.describeNamespace({ namespace: 'default' });
    await conn.close();
    const typeName = (t: number) => (IndexedValueType[t] ?? String(t)).replace('INDEXED_VALUE_TYPE_', '');
    const namespaceAtSetup = {
      retentionSeconds: Number(ns.config?.workflowExecutionRetentionTtl?.seconds ?? 0),
      searchAttributes: Object.fromEntries(Object.entries(attrs.customAttributes ?? {}).map(([k, v]) => [k, typeName(v)])),
    };

    const provider = await startProvider();
    teardown.unshift(() => provider.close());
    const control = await startClusterControl(cluster);
    teardown.unshift(() => control.close());
    const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
    const bundlePath = join(cluster.dir, 'workflow-bundle.js');
    writeFileSync(bundlePath, code);

    project.provide('temporalAddress', cluster.address);
    project.provide('providerUrl', provider.url);
    project.provide('workflowBundlePath', bundlePath);
    project.provide('clusterControlUrl', control.url);
    project.provide('namespaceAtSetup', namespaceAtSetup);
    project.provide('clusterDir', cluster.dir);
    // The same credentials dev/cluster/cluster.ts gave initdb: the compose file's postgresql service.
    const pgEnv = composeServiceEnv('postgresql');
    project.provide('clusterPostgres', { host: '127.0.0.1', port: cluster.postgres.port, user: pgEnv.POSTGRES_USER, password: pgEnv.POSTGRES_PASSWORD });
  } catch (err) {
    for (const f of teardown) await f().catch(() => {});
    throw err;
  }
  return async () => {
    for (const f of teardown) await f();
  };
}

const noop = () => {};
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };
