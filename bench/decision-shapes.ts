// `tsx bench/decision-shapes.ts`: the least a decision costs on Temporal here,
// whatever the loop does. Runs of bench/decision-shapes/workflows.ts park on
// an update, then take 0, 1 or 2 activities that do nothing and end: the
// same shape as our loop's decision path (the decision's task, the approved
// write, the task that takes it and sends the model call, the model call, the
// task that ends the run) with no work in it. Per shape: a fresh dev server
// (the agent loop's settings, eager dispatch on), a worker process (cache
// 500, as bench/decisions.ts gives ours), N runs started and left to park,
// then every one decided by an update, 200 in flight; the time from the
// first decision until every run finished, and the server's and the worker's
// CPU over it, per run. Shapes interleaved, REPEATS times.
// npm run bench:shapes.
//   SHAPES_RUNS (default 2000), SHAPES_REPEATS (default 1), SHAPES (comma list of activity counts; default 0,1,2)
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { AGENT_LOOP_DYNAMIC_CONFIG, findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { processCpuMs, settledCpuMs } from './proc-cpu.js';
import { pool, spread, until } from './fleet.js';

const N = Number(process.env.SHAPES_RUNS ?? 2000);
const REPEATS = Number(process.env.SHAPES_REPEATS ?? 1);
const SHAPES = (process.env.SHAPES ?? '0,1,2').split(',').map(Number);
if (!Number.isInteger(N) || N < 1 || !Number.isInteger(REPEATS) || REPEATS < 1 || SHAPES.some((s) => !Number.isInteger(s) || s < 0)) {
  throw new Error('SHAPES_RUNS and SHAPES_REPEATS must be whole numbers of 1 or more, SHAPES a comma list of whole numbers');
}
const WORKER = fileURLToPath(new URL('./decision-shapes/worker.ts', import.meta.url));

interface Row { activities: number; decidedToEndS: number; serverMsPerRun: number; workerMsPerRun: number; load: number }

async function one(activities: number, round: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'decision-shapes-'));
  const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig: AGENT_LOOP_DYNAMIC_CONFIG });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const taskQueue = 'decision-shapes';
  const worker = spawn(process.execPath, ['--import', 'tsx', WORKER], { cwd: PROJECT_ROOT, env: { ...process.env, TEMPORAL_ADDRESS: server.address, TASK_QUEUE: taskQueue }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('exit', (code) => reject(new Error(`the shapes worker exited (${code}) before it was ready`)));
      worker.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
    });
    const prefix = `s${round}-${activities}`;
    await pool(N, 100, async (i) => {
      await client.workflow.start('decisionShape', { taskQueue, workflowId: `${prefix}-${i}`, args: [activities] });
    });
    const pid = server.child?.pid;
    const wpid = worker.pid;
    if (pid === undefined || wpid === undefined) throw new Error('no pid for the server or the worker');
    // Every run's first task done (parked) once the server is idle.
    const s0 = await settledCpuMs(pid);
    const w0 = processCpuMs(wpid);
    const t0 = performance.now();
    await pool(N, 200, async (i) => {
      await client.workflow.getHandle(`${prefix}-${i}`).executeUpdate('decide', { args: ['bench'] });
    });
    await until('every run finished', async () => (await client.workflow.count(`ExecutionStatus = "Running"`)).count === 0);
    const decidedToEndS = (performance.now() - t0) / 1000;
    const s1 = await settledCpuMs(pid);
    const w1 = processCpuMs(wpid);
    const row: Row = { activities, decidedToEndS, serverMsPerRun: (s1 - s0) / N, workerMsPerRun: (w1 - w0) / N, load: loadavg()[0] };
    console.log(JSON.stringify(row));
    return row;
  } finally {
    worker.kill();
    await connection.close();
    await server.stop();
  }
}

const rows: Row[] = [];
for (let r = 0; r < REPEATS; r++) for (const s of SHAPES) rows.push(await one(s, r));
const commit = execSync('git rev-parse --short HEAD', { cwd: PROJECT_ROOT }).toString().trim();
console.log(`\ncommit ${commit}, ${N} runs per shape, ${REPEATS} repeats; min / median / max`);
console.log('| activities after the decision | decision→end s | server CPU ms/run | worker CPU ms/run | load (1 min) |');
console.log('|---|---|---|---|---|');
for (const s of SHAPES) {
  const rs = rows.filter((r) => r.activities === s);
  console.log(`| ${s} | ${spread(rs.map((r) => r.decidedToEndS))} | ${spread(rs.map((r) => r.serverMsPerRun))} | ${spread(rs.map((r) => r.workerMsPerRun))} | ${spread(rs.map((r) => r.load))} |`);
}
process.exit(0);
