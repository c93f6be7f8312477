// `npm run bench:parked` (also run by `npm run bench:long`): a fleet of runs
// parked on approvals. Starts N `destructive` runs (each parks on its delete),
// measures the worker process's memory once all are parked, then approves
// every one and measures how long until every decision is taken and until
// every run has finished. The worker is a separate process (its RSS is read
// from /proc), with the cache size under test; the dev server runs with the
// agent-loop settings.
//   PARKED_RUNS (default 10000), PARKED_CACHE (comma list, default "default,1000"),
//   PARKED_HEAP_MB (the worker's --max-old-space-size; default: Node's),
//   PARKED_REPORT (default reports/parked.md),
//   PARKED_CLUSTER=1 (the compose stack's cluster of docs/cluster.md, started natively
//   on PostgreSQL, instead of the dev server; server CPU is then its four services'
//   processes, PostgreSQL's not counted)
import { Connection, Client } from '@temporalio/client';
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { AGENT_LOOP_DYNAMIC_CONFIG, findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { dataConverter } from '../node/payload-codec.js';
import { startWorkerProcess, type WorkerProcess } from '../test/helpers/spawn-worker.js';
import { startProvider } from '../dev/provider/server.js';
import { SERVICES, startCluster } from '../dev/cluster/cluster.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { approveByQuery } from '../client/batch-decisions.js';
import type { AgentInput } from '../common/contract.js';
import { pool, until } from './fleet.js';

const N = Number(process.env.PARKED_RUNS ?? 10_000);
const CACHES = (process.env.PARKED_CACHE ?? 'default,1000').split(',');
const IN_FLIGHT = 200;

/** Resident memory of a process, in MiB (Linux). */
function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

/** CPU seconds a process has used so far (user + system, Linux). */
function cpuS(pid: number | undefined): number {
  if (!pid) return 0;
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function count(client: Client, query: string): Promise<number> {
  return (await client.workflow.count(query)).count;
}

interface Row {
  cache: string;
  parkS: number;
  rssParked: number;
  rssPeak: number;
  signalsS: number;
  decidedS: number;
  doneS: number;
  /** CPU seconds over the whole fleet: worker process, server, this process (client and scripted provider). */
  cpu: { worker: number; server: number; bench: number };
}

async function fleet(cache: string): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-parked-'));
  const server = await startServer(dir);
  const provider = await startProvider();
  const client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: dataConverter() });
  const taskQueue = 'parked';
  let worker: WorkerProcess | null = null;
  let benchDone = false;
  let peak = 0;
  const sample = () => {
    if (worker?.child.pid && worker.child.exitCode === null) peak = Math.max(peak, rssMiB(worker.child.pid));
  };
  try {
    worker = await startWorkerProcess({
      address: server.address,
      taskQueue,
      traceDir: join(dir, 'traces'),
      workspaceRoot: join(dir, 'ws'),
      llmBaseUrl: provider.url,
      env: {
        WORKER_MAX_CACHED_WORKFLOWS: cache === 'default' ? '' : cache,
        ...(process.env.PARKED_HEAP_MB ? { NODE_OPTIONS: `--max-old-space-size=${process.env.PARKED_HEAP_MB}` } : {}),
      },
    });
    const ticker = setInterval(sample, 200);
    const w = worker;
    // A worker that dies (out of memory under the heap cap) says why, where the bench would only fail reading /proc.
    w.child.once('exit', (code, signal) => {
      if (!benchDone) console.error(`the worker exited (${code ?? signal}); it said:\n${w.output().slice(-4000)}`);
    });
    const cpu0 = process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6;
    const t0 = performance.now();
    await pool(N, IN_FLIGHT, async (i) => {
      const input: AgentInput = { task: 'Clean up the workspace.', model: 'destructive', workspace: `w${i}` };
      await client.workflow.start('agentRun', { taskQueue, workflowId: `parked-${i}`, args: [input] });
    });
    await until('every run parked', async () => (await count(client, 'AgentStatus = "awaiting_approval"')) >= N);
    const parkS = (performance.now() - t0) / 1000;
    // Memory settles: give the collector a moment, then read it.
    await new Promise((r) => setTimeout(r, 3000));
    const rssParked = rssMiB(worker.child.pid!);
    sample();
    const t1 = performance.now();
    // The documented ops command: `approve --query` (client/batch-decisions.ts), one decide update per run.
    const outcome = await approveByQuery(client, { query: 'WorkflowId STARTS_WITH "parked-"', by: 'bench', concurrency: IN_FLIGHT });
    if (outcome.approved + outcome.pending !== N) throw new Error(`approve --query took ${outcome.approved} (+${outcome.pending} pending) of ${N}: ${JSON.stringify(outcome.runs.find((r) => r.result !== 'approved'))}`);
    const signalsS = (performance.now() - t1) / 1000;
    await until('every decision taken', async () => (await count(client, 'AgentStatus = "awaiting_approval"')) === 0);
    const decidedS = (performance.now() - t1) / 1000;
    await until('every run finished', async () => (await count(client, 'ExecutionStatus = "Running"')) === 0);
    const doneS = (performance.now() - t1) / 1000;
    clearInterval(ticker);
    const cpu = { worker: cpuS(worker.child.pid), server: server.cpuS(), bench: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 - cpu0 };
    const row = { cache, parkS, rssParked, rssPeak: peak, signalsS, decidedS, doneS, cpu };
    console.log(JSON.stringify(row));
    return row;
  } finally {
    benchDone = true;
    await worker?.kill();
    await client.connection.close();
    await provider.close();
    await server.stop();
  }
}

/** The server under test: the dev server with the agent-loop settings, or (PARKED_CLUSTER=1) the cluster of docs/cluster.md. */
async function startServer(dir: string): Promise<{ address: string; cpuS(): number; stop(): Promise<void> }> {
  if (process.env.PARKED_CLUSTER === '1') {
    const cluster = await startCluster({ dir: join(dir, 'cluster') });
    return { address: cluster.address, cpuS: () => SERVICES.reduce((n, s) => n + cpuS(cluster.pid(s) ?? undefined), 0), stop: () => cluster.stop() };
  }
  const dev = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig: AGENT_LOOP_DYNAMIC_CONFIG });
  return { address: dev.address, cpuS: () => cpuS(dev.child?.pid), stop: () => dev.stop() };
}

const rows: Row[] = [];
for (const cache of CACHES) rows.push(await fleet(cache));

const commit = execSync('git rev-parse --short HEAD', { cwd: PROJECT_ROOT }).toString().trim();
mkdirSync(join(PROJECT_ROOT, 'reports'), { recursive: true });
writeFileSync(
  process.env.PARKED_REPORT ?? join(PROJECT_ROOT, 'reports', 'parked.md'),
  `# Runs parked on approvals (\`npm run bench:parked\`)

Commit ${commit}, ${new Date().toISOString().slice(0, 10)}, 2 cores, ${process.env.PARKED_CLUSTER === '1' ? 'the cluster of docs/cluster.md (four services on PostgreSQL; server CPU: the four services, not PostgreSQL)' : 'dev server (agent-loop settings)'} and scripted
provider on the same machine, one worker process. ${N} \`destructive\` runs each parked on its delete; then all approved
(by approve --query, ${IN_FLIGHT} decide updates in flight). RSS: the worker process's resident memory.

| worker cache (maxCachedWorkflows)${process.env.PARKED_HEAP_MB ? `, heap cap ${process.env.PARKED_HEAP_MB} MB` : ''} | all parked after | worker RSS parked | worker RSS peak | decisions answered | all decisions taken | all runs finished | CPU s: worker / server / client+provider |
|---|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.cache} | ${r.parkS.toFixed(1)} s | ${r.rssParked.toFixed(0)} MiB | ${r.rssPeak.toFixed(0)} MiB | ${r.signalsS.toFixed(1)} s | ${r.decidedS.toFixed(1)} s | ${r.doneS.toFixed(1)} s | ${r.cpu.worker.toFixed(0)} / ${r.cpu.server.toFixed(0)} / ${r.cpu.bench.toFixed(0)} |`).join('\n')}
`,
);
