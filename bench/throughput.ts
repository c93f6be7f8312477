// Throughput, ours beside the peer on one dev server: rounds of N concurrent
// `plan` runs (3 turns: list_files, read_file, the answer), ours then the
// peer's, interleaved so that a drift of the machine's load falls on both.
// Per round: runs/s, the server's CPU per run (the dev server's process, read
// from /proc before and after the round), the CPU of everything else per run,
// and what a run's history holds (events, upserts, markers).
import type { AgentInput, RunResult } from '../common/contract.js';
import { startingAttributes } from '../workflows/visibility.js';
import { countActions, type ActionCount } from './actions.js';
import { PEER_TASK_QUEUE, startPeer } from './peer-process.js';
import { processCpuMs, settledCpuMs } from './proc-cpu.js';
import { startBenchStack, type BenchStack } from './stack.js';

export type Side = 'ours' | 'peer';

export interface RoundFigures {
  runsPerSec: number;
  /** The dev server's process CPU (utime + stime) over the round, per run. */
  serverCpuMsPerRun: number;
  /**
   * Every other process's CPU over the round, per run: this process (the
   * client and our worker), the scripted provider's process and the peer's
   * worker process. Both sides pay the same client and provider, so the
   * difference is the workers'.
   */
  clientSideCpuMsPerRun: number;
}

export interface ThroughputFigures {
  concurrent: number;
  rounds: Record<Side, RoundFigures[]>;
  /** Ours ÷ the peer's runs/s, within each pair of rounds. */
  runsPerSecRatio: number[];
  /** Ours ÷ the peer's server CPU per run, within each pair of rounds. */
  serverCpuRatio: number[];
  /** The histories of the first runs of every round. */
  histories: Record<Side, ActionCount[]>;
}

const TASK = 'Which file mentions a timeout?';
/** Histories read per round (after its CPU is read, so reading them is not counted). */
const HISTORIES_PER_ROUND = 5;
let seq = 0;

/** One `plan` run to its end; throws unless it ended as the scenario does. */
async function planRun(stack: BenchStack, side: Side, id: string): Promise<void> {
  if (side === 'ours') {
    const input: AgentInput = { task: TASK, model: 'plan' };
    // Started as `agent-harness run` starts runs: its starting search attributes set.
    const r = (await stack.client.workflow.execute('agentRun', { taskQueue: stack.taskQueue, workflowId: id, args: [input], typedSearchAttributes: startingAttributes(input) })) as RunResult;
    if (r.status !== 'completed' || r.turns !== 3) throw new Error(`run ${id} ended ${r.status} after ${r.turns} turns, expected completed after 3`);
  } else {
    const r = (await stack.client.workflow.execute('peerAgent', { taskQueue: PEER_TASK_QUEUE, workflowId: id, args: [TASK, 'plan', 20] })) as { steps: number; text: string };
    if (r.steps !== 3 || !r.text.includes('timeout')) throw new Error(`peer run ${id} took ${r.steps} steps (${JSON.stringify(r.text.slice(0, 80))}), expected 3 ending in the answer`);
  }
}

async function round(stack: BenchStack, peerPid: number, side: Side, n: number): Promise<{ figures: RoundFigures; ids: string[] }> {
  const ids = Array.from({ length: n }, () => `tp-${side}-${++seq}`);
  const otherCpuMs = () => {
    const self = process.cpuUsage();
    return (self.user + self.system) / 1000 + processCpuMs(peerPid) + processCpuMs(stack.providerPid);
  };
  const serverBefore = await settledCpuMs(stack.serverPid);
  const otherBefore = otherCpuMs();
  const t0 = performance.now();
  await Promise.all(ids.map((id) => planRun(stack, side, id)));
  const ms = performance.now() - t0;
  const serverAfter = await settledCpuMs(stack.serverPid);
  const otherAfter = otherCpuMs();
  return {
    ids,
    figures: { runsPerSec: n / (ms / 1000), serverCpuMsPerRun: (serverAfter - serverBefore) / n, clientSideCpuMsPerRun: (otherAfter - otherBefore) / n },
  };
}

/** `rounds` rounds of `n` concurrent runs each side, interleaved, on one fresh dev server with both workers on it. */
export async function measureThroughput(n: number, rounds: number): Promise<ThroughputFigures> {
  const stack = await startBenchStack();
  const peer = await startPeer(stack);
  const running = stack.worker.run();
  const out: ThroughputFigures = { concurrent: n, rounds: { ours: [], peer: [] }, runsPerSecRatio: [], serverCpuRatio: [], histories: { ours: [], peer: [] } };
  try {
    if (peer.pid === undefined) throw new Error('the peer worker process has no pid');
    // Warm-up: both workers load their workflow code and fill their caches.
    for (const side of ['ours', 'peer'] as const) await Promise.all(Array.from({ length: Math.min(20, n) }, () => planRun(stack, side, `tp-warm-${side}-${++seq}`)));
    for (let r = 0; r < rounds; r++) {
      const pair: Partial<Record<Side, RoundFigures>> = {};
      for (const side of ['ours', 'peer'] as const) {
        const { figures, ids } = await round(stack, peer.pid, side, n);
        pair[side] = figures;
        out.rounds[side].push(figures);
        for (const id of ids.slice(0, HISTORIES_PER_ROUND)) out.histories[side].push(countActions(await stack.client.workflow.getHandle(id).fetchHistory()));
      }
      out.runsPerSecRatio.push(pair.ours!.runsPerSec / pair.peer!.runsPerSec);
      out.serverCpuRatio.push(pair.ours!.serverCpuMsPerRun / pair.peer!.serverCpuMsPerRun);
    }
  } finally {
    stack.worker.shutdown();
    peer.kill('SIGTERM');
    await running;
    await stack.close();
  }
  return out;
}
