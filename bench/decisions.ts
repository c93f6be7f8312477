// `tsx bench/decisions.ts`: what a decision costs, from the approval to the
// run's end, for server settings side by side. Each variant: a fresh dev
// server, one worker process, N `destructive` runs parked on their delete,
// then all approved the way the variant says; the figures are the server's
// and the worker's CPU from the first decision until every run finished
// (read after the server went idle), per run, and the time it took. The
// variants run interleaved, REPEATS times, so a drift of the machine's load
// falls on all of them; compare ratios within one run of this script.
//   DECISION_RUNS (default 300), DECISION_REPEATS (default 2),
//   DECISION_VARIANTS (comma list of names below; default every one)
import { Connection, Client } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { AGENT_LOOP_DYNAMIC_CONFIG, findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { dataConverter } from '../node/payload-codec.js';
import { startWorkerProcess, type WorkerProcess } from '../test/helpers/spawn-worker.js';
import { startProvider } from '../dev/provider/server.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { approveByQuery } from '../client/batch-decisions.js';
import { countActions } from './actions.js';
import { processCpuMs, settledCpuMs } from './proc-cpu.js';
import type { AgentInput } from '../common/contract.js';
import { pool, spread, until } from './fleet.js';

const N = Number(process.env.DECISION_RUNS ?? 300);
const REPEATS = Number(process.env.DECISION_REPEATS ?? 2);

interface Variant {
  name: string;
  dynamicConfig: Record<string, unknown>;
  workerEnv?: Record<string, string>;
}
const ALL: Variant[] = [
  // The server as it was before eager dispatch, the worker streaming tokens and progress.
  { name: 'eager-off', dynamicConfig: { ...AGENT_LOOP_DYNAMIC_CONFIG, 'system.enableActivityEagerExecution': false } },
  { name: 'shipped', dynamicConfig: AGENT_LOOP_DYNAMIC_CONFIG },
  // The live stream carrying events only (no token or progress signals): what a run nobody watches costs once tokens are free then.
  { name: 'shipped+stream-events', dynamicConfig: AGENT_LOOP_DYNAMIC_CONFIG, workerEnv: { AGENT_LIVE_STREAM: 'events' } },
];
const wanted = process.env.DECISION_VARIANTS?.split(',');
const VARIANTS = wanted ? ALL.filter((v) => wanted.includes(v.name)) : ALL;

interface Row { variant: string; decidedToEndS: number; serverMsPerRun: number; workerMsPerRun: number; eventsAfterDecision: number; actionsPerRun: number; load: number; pending: number }

async function one(v: Variant, round: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-decisions-'));
  const server = await startDevServer({ port: await findFreePort(), uiPort: null, dbFile: null, logFile: join(dir, 'server.log'), dynamicConfig: v.dynamicConfig });
  const provider = await startProvider();
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, dataConverter: dataConverter() });
  const taskQueue = 'decisions';
  let worker: WorkerProcess | null = null;
  try {
    worker = await startWorkerProcess({ address: server.address, taskQueue, traceDir: join(dir, 'traces'), workspaceRoot: join(dir, 'ws'), llmBaseUrl: provider.url, env: { WORKER_MAX_CACHED_WORKFLOWS: '500', ...v.workerEnv } });
    const prefix = `d${round}-${v.name}`;
    await pool(N, 100, async (i) => {
      const input: AgentInput = { task: 'Clean up the workspace.', model: 'destructive', workspace: `w${i}` };
      await client.workflow.start('agentRun', { taskQueue, workflowId: `${prefix}-${i}`, args: [input] });
    });
    await until('every run parked', async () => (await client.workflow.count('AgentStatus = "awaiting_approval"')).count >= N);
    const pid = server.child!.pid!;
    const wpid = worker.child.pid!;
    const s0 = await settledCpuMs(pid);
    const w0 = processCpuMs(wpid);
    const t0 = performance.now();
    // The documented ops command: one batch decision by visibility query.
    const outcome = await approveByQuery(client, { query: `WorkflowId STARTS_WITH "${prefix}-"`, by: 'bench' });
    if (outcome.approved + outcome.pending !== N) throw new Error(`approved ${outcome.approved} of ${N}: ${JSON.stringify(outcome).slice(0, 400)}`);
    await until('every run finished', async () => (await client.workflow.count('ExecutionStatus = "Running"')).count === 0);
    const decidedToEndS = (performance.now() - t0) / 1000;
    const s1 = await settledCpuMs(pid);
    const w1 = processCpuMs(wpid);
    const hist = await client.workflow.getHandle(`${prefix}-0`).fetchHistory();
    const events = hist.events ?? [];
    const decisionAt = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'approve' || e.workflowExecutionUpdateAcceptedEventAttributes);
    const row: Row = {
      variant: v.name,
      decidedToEndS,
      serverMsPerRun: (s1 - s0) / N,
      workerMsPerRun: (w1 - w0) / N,
      eventsAfterDecision: events.length - decisionAt,
      actionsPerRun: countActions(hist).actions,
      load: loadavg()[0],
      pending: outcome.pending,
    };
    console.log(JSON.stringify(row));
    return row;
  } finally {
    await worker?.kill();
    await connection.close();
    await provider.close();
    await server.stop();
  }
}

const rows: Row[] = [];
for (let r = 0; r < REPEATS; r++) for (const v of VARIANTS) rows.push(await one(v, r));
const commit = execSync('git rev-parse --short HEAD', { cwd: PROJECT_ROOT }).toString().trim();
console.log(`\ncommit ${commit}, ${N} runs per variant, ${REPEATS} repeats; min / median / max`);
console.log('| variant | decision→end s | server CPU ms/run | worker CPU ms/run | events after decision | Actions/run | load (1 min) |');
console.log('|---|---|---|---|---|---|---|');
for (const v of VARIANTS) {
  const rs = rows.filter((r) => r.variant === v.name);
  console.log(`| ${v.name} | ${spread(rs.map((r) => r.decidedToEndS))} | ${spread(rs.map((r) => r.serverMsPerRun))} | ${spread(rs.map((r) => r.workerMsPerRun))} | ${rs[0].eventsAfterDecision} | ${rs[0].actionsPerRun} | ${spread(rs.map((r) => r.load))} |`);
}
