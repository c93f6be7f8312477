// `npm run bench`: our harness beside the floor (the same agent as a plain
// in-process loop) and the closest peer (@temporalio/ai-sdk running the same
// agent as a workflow on the same server), interleaved within one run, on the
// server settings this project ships and on the dev server's defaults. Then
// throughput (concurrent runs) and how fast a Stop reaches a running tool.
// Every figure is min/median/max over the repetitions, with ratios taken
// inside each repetition; the report goes to reports/bench.md with its commit.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { readTrace } from '../common/trace-format';
import { PROJECT_ROOT } from '../common/project-root';
import { cancelSignal } from '../workflows/messages';
import type { AgentInput, RunResult } from '../common/contract';
import { runFloor } from './floor';
import { startBenchStack, type BenchStack } from './stack';

const REPS = Number(process.env.BENCH_REPS ?? 3);
const TURNS = 20;
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 200);
const CANCELS = Number(process.env.BENCH_CANCELS ?? 20);

type Stat = { min: number; median: number; max: number };
const stat = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor((s.length - 1) / 2)], max: s[s.length - 1] };
};
const fmt = (s: Stat, digits = 1) => `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];
let seq = 0;

async function msPerTurn(stack: BenchStack, variant: 'floor' | 'ours' | 'peer'): Promise<number> {
  const t0 = performance.now();
  let turns: number;
  if (variant === 'floor') {
    turns = (await runFloor(stack.providerUrl, 'runaway', TURNS)).turns;
  } else if (variant === 'ours') {
    const input: AgentInput = { task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: TURNS, maxBudgetUsd: null } };
    const r = (await stack.client.workflow.execute('agentRun', { taskQueue: stack.taskQueue, workflowId: `cmp-ours-${++seq}`, args: [input] })) as RunResult;
    turns = r.turns;
  } else {
    const r = (await stack.client.workflow.execute('peerAgent', { taskQueue: 'peer', workflowId: `cmp-peer-${++seq}`, args: ['Keep listing files.', 'runaway', TURNS] })) as { steps: number };
    turns = r.steps;
  }
  if (turns !== TURNS) throw new Error(`${variant} took ${turns} turns, expected ${TURNS}`);
  return (performance.now() - t0) / turns;
}

interface Comparison {
  server: string;
  perTurn: Record<'floor' | 'ours' | 'peer', number[]>;
  oursOverFloor: number[];
  oursOverPeer: number[];
}

async function compare(server: string, dynamicConfig: Record<string, unknown>): Promise<Comparison> {
  const stack = await startBenchStack({ dynamicConfig });
  const peer = await startPeer(stack);
  const running = [stack.worker.run()];
  const out: Comparison = { server, perTurn: { floor: [], ours: [], peer: [] }, oursOverFloor: [], oursOverPeer: [] };
  try {
    for (const v of ['floor', 'ours', 'peer'] as const) await msPerTurn(stack, v); // warm-up
    const orders = [['floor', 'ours', 'peer'], ['ours', 'peer', 'floor'], ['peer', 'floor', 'ours']] as const;
    for (let rep = 0; rep < REPS; rep++) {
      const row: Partial<Record<'floor' | 'ours' | 'peer', number>> = {};
      for (const v of orders[rep % orders.length]) row[v] = await msPerTurn(stack, v);
      for (const v of ['floor', 'ours', 'peer'] as const) out.perTurn[v].push(row[v]!);
      out.oursOverFloor.push(row.ours! / row.floor!);
      out.oursOverPeer.push(row.ours! / row.peer!);
    }
  } finally {
    stack.worker.shutdown();
    peer.kill('SIGTERM');
    await Promise.all(running);
    await stack.close();
  }
  return out;
}

/**
 * The peer runs in its own process from its own package (bench/peer), with
 * @temporalio/* 1.23 as @temporalio/ai-sdk requires: two copies of
 * @temporalio/proto cannot share a process. Installed on first use.
 */
async function startPeer(stack: BenchStack): Promise<ChildProcess> {
  const dir = `${PROJECT_ROOT}/bench/peer`;
  if (!existsSync(`${dir}/node_modules/@temporalio/ai-sdk`)) execSync('npm install --no-audit --no-fund', { cwd: dir, stdio: 'inherit' });
  const child = spawn(process.execPath, ['--import', 'tsx', `${dir}/main.ts`], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: stack.address, PEER_TASK_QUEUE: 'peer', LLM_BASE_URL: stack.providerUrl, AGENT_WORKSPACE: stack.workspaceRoot },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (b: Buffer) => b.toString().includes('peer ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the peer worker exited with ${code}`)));
  });
  return child;
}

async function throughput(): Promise<{ runsPerSec: number; ms: number }> {
  const stack = await startBenchStack();
  const running = stack.worker.run();
  try {
    await stack.client.workflow.execute('agentRun', { taskQueue: stack.taskQueue, workflowId: 'tp-warm', args: [{ task: 'warm', model: 'plan' }] });
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        stack.client.workflow.execute('agentRun', { taskQueue: stack.taskQueue, workflowId: `tp-${i}`, args: [{ task: 'Which file mentions a timeout?', model: 'plan' }] }),
      ),
    );
    const ms = performance.now() - t0;
    if (results.some((r) => (r as RunResult).status !== 'completed')) throw new Error('a throughput run did not complete');
    return { runsPerSec: CONCURRENT / (ms / 1000), ms };
  } finally {
    stack.worker.shutdown();
    await running;
    await stack.close();
  }
}

async function cancels(): Promise<{ toTool: number[]; toResult: number[] }> {
  const stack = await startBenchStack();
  const running = stack.worker.run();
  const toTool: number[] = [];
  const toResult: number[] = [];
  try {
    for (let i = 0; i < CANCELS; i++) {
      const id = `cancel-${i}`;
      const handle = await stack.client.workflow.start('agentRun', { taskQueue: stack.taskQueue, workflowId: id, args: [{ task: 'Scan.', model: 'slow' }] });
      while (!readTrace(stack.traceDir, id).some((l) => l.type === 'tool_progress')) await new Promise((r) => setTimeout(r, 20));
      const stopAt = Date.now();
      await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      await handle.result();
      toResult.push(Date.now() - stopAt);
      const aborted = readTrace(stack.traceDir, id).find((l) => l.type === 'tool_cancelled');
      if (!aborted) throw new Error(`run ${id}: the tool never saw the Stop`);
      toTool.push(Date.parse(aborted.ts) - stopAt);
    }
  } finally {
    stack.worker.shutdown();
    await running;
    await stack.close();
  }
  return { toTool, toResult };
}

const lines: string[] = [];
const say = (l: string) => {
  console.log(l);
  lines.push(l);
};
const commit = execSync('git rev-parse --short HEAD', { cwd: PROJECT_ROOT }).toString().trim();
say(`# Benchmark (commit ${commit}, ${new Date().toISOString().slice(0, 10)}, ${REPS} repetitions, interleaved)`);
say('');
say(`Per-turn wall time of a ${TURNS}-turn \`runaway\` run (a model call and a list_files call per turn, scripted provider at 0 ms): min / median / max.`);
say('');
say('| server | floor: in-process loop (ms/turn) | ours (ms/turn) | peer: @temporalio/ai-sdk (ms/turn) | ours ÷ floor | ours ÷ peer |');
say('|---|---|---|---|---|---|');
for (const [name, cfg] of [
  ['shipped settings (transferProcessorMaxPollRPS 1000)', {}],
  ['dev-server defaults (20/s)', { 'history.transferProcessorMaxPollRPS': 20 }],
] as const) {
  const c = await compare(name, cfg);
  say(`| ${name} | ${fmt(stat(c.perTurn.floor))} | ${fmt(stat(c.perTurn.ours))} | ${fmt(stat(c.perTurn.peer))} | ${fmt(stat(c.oursOverFloor), 2)}× | ${fmt(stat(c.oursOverPeer), 2)}× |`);
}
say('');
const tp = await throughput();
say(`Throughput: ${CONCURRENT} concurrent \`plan\` runs (3 turns, 2 tools each) in ${(tp.ms / 1000).toFixed(1)} s = ${tp.runsPerSec.toFixed(1)} runs/s.`);
const c = await cancels();
say(`Stop → the running tool sees it (\`tool_cancelled\`): p50 ${pct(c.toTool, 0.5)} ms, p95 ${pct(c.toTool, 0.95)} ms, max ${Math.max(...c.toTool)} ms; → the run's result: p50 ${pct(c.toResult, 0.5)} ms, p95 ${pct(c.toResult, 0.95)} ms (${CANCELS} Stops of \`slow\`).`);
writeFileSync(`${PROJECT_ROOT}/reports/bench.md`, lines.join('\n') + '\n');
