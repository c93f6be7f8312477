// Per-turn wall time and Actions per turn of the same agent run every way the
// bench compares (`npm run bench`'s first part, `npm run bench:gate`), on one
// stack, interleaved within each round so that load drifting over the run
// hits every row alike:
//   floor            the same agent as a plain in-process loop (no Temporal)
//   ours, streamed   the shipped worker (AGENT_LIVE_STREAM=full), nobody reading: the provider streams, no token is published
//   ours, watched    the same with a reader attached (AgentRunHandle.events()): tokens published as they arrive
//   ours, unstreamed a worker with AGENT_LIVE_STREAM=events: the provider is asked unstreamed
//   peer             @temporalio/ai-sdk's generateText (unstreamed), its default
//   peer, streamed   its streamText through TemporalProvider's `streamingTopic` (tokens published on the workflow's stream)
// The scripted provider's one time model applies to every row (first token,
// ms per output token: PROVIDER_FIRST_TOKEN_MS, PROVIDER_MS_PER_TOKEN, default
// 0 and 0: the harness's own cost per turn, nothing a provider adds).
import type { ChildProcess } from 'node:child_process';
import type { WorkflowHandle } from '@temporalio/client';
import { AgentClient } from '../client/index.js';
import type { AgentInput } from '../common/contract.js';
import { startingAttributes } from '../workflows/visibility.js';
import { countActions } from './actions.js';
import { runFloor } from './floor.js';
import { PEER_TASK_QUEUE, startPeer } from './peer-process.js';
import { startBenchStack, type BenchStack } from './stack.js';
import { settledCpuMs } from './proc-cpu.js';

export const VARIANTS = ['floor', 'oursStreamed', 'oursWatched', 'oursUnstreamed', 'peer', 'peerStreamed'] as const;
export type Variant = (typeof VARIANTS)[number];

export const VARIANT_NAMES: Record<Variant, string> = {
  floor: 'floor: in-process loop',
  oursStreamed: 'ours, streamed (shipped: `full`), nobody reading',
  oursWatched: 'ours, streamed, one reader attached',
  oursUnstreamed: 'ours, unstreamed (`AGENT_LIVE_STREAM=events`)',
  peer: 'peer: @temporalio/ai-sdk, unstreamed (generateText)',
  peerStreamed: 'peer, streamed (streamText, `streamingTopic`)',
};

/** The scripted provider's time model for the bench, from the environment (ms; default 0 and 0). */
export function timeModel(): { firstTokenMs: number; msPerToken: number } {
  const ms = (name: string) => {
    const raw = process.env[name];
    const n = raw === undefined || raw === '' ? 0 : Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number of ms >= 0, got ${JSON.stringify(raw)}`);
    return n;
  };
  return { firstTokenMs: ms('PROVIDER_FIRST_TOKEN_MS'), msPerToken: ms('PROVIDER_MS_PER_TOKEN') };
}

export interface TurnStack {
  stack: BenchStack;
  close(): Promise<void>;
}

const UNSTREAMED_QUEUE = 'bench-unstreamed';

/** The stack, a worker of ours streaming (the stack's own) and one not, and the peer's worker process. */
export async function startTurnStack(dynamicConfig: Record<string, unknown> = {}): Promise<TurnStack> {
  const stack = await startBenchStack({ dynamicConfig, provider: timeModel() });
  const unstreamed = await stack.addWorker(UNSTREAMED_QUEUE, { stream: 'events' });
  const peer: ChildProcess = await startPeer(stack);
  const running = [stack.worker.run(), unstreamed.run()];
  return {
    stack,
    close: async () => {
      stack.worker.shutdown();
      unstreamed.shutdown();
      peer.kill('SIGTERM');
      await Promise.all(running);
      await stack.close();
    },
  };
}

let seq = 0;

export interface OneRun {
  msPerTurn: number;
  /** Billed Actions per turn, from the run's history (0 for the floor: no Temporal). */
  actionsPerTurn: number;
  /** The run's workflow id (none for the floor). */
  workflowId: string | null;
}

/** One run of `variant`, `turns` turns of `model`; its wall time and Actions per turn. */
export async function oneRun({ stack }: TurnStack, variant: Variant, model: string, turns: number): Promise<OneRun> {
  const t0 = performance.now();
  let took: number;
  let handle: WorkflowHandle | null = null;
  const id = `turns-${variant}-${process.pid}-${++seq}`;
  if (variant === 'floor') {
    took = (await runFloor(stack.providerUrl, model, turns)).turns;
  } else if (variant === 'peer' || variant === 'peerStreamed') {
    handle = await stack.client.workflow.start(variant === 'peer' ? 'peerAgent' : 'peerAgentStreamed', { taskQueue: PEER_TASK_QUEUE, workflowId: id, args: ['Keep listing files.', model, turns] });
    took = ((await handle.result()) as { steps: number }).steps;
  } else {
    const input: AgentInput = { task: 'Keep listing files.', model, dedupe: 'off', limits: { maxTurns: turns, maxBudgetUsd: null } };
    // Started as the CLI starts runs: its starting search attributes set (no upsert at its start).
    handle = await stack.client.workflow.start('agentRun', { taskQueue: variant === 'oursUnstreamed' ? UNSTREAMED_QUEUE : stack.taskQueue, workflowId: id, args: [input], typedSearchAttributes: startingAttributes(input) });
    // The watched row: a reader from offset 0 for the whole run, as `agent-harness follow` reads.
    const reading = variant === 'oursWatched' ? readToEnd(stack, id) : null;
    took = ((await handle.result()) as { turns: number }).turns;
    await reading;
  }
  const msPerTurn = (performance.now() - t0) / took;
  if (took !== turns) throw new Error(`${variant} took ${took} turns, expected ${turns}`);
  const actionsPerTurn = handle ? countActions(await handle.fetchHistory()).actions / took : 0;
  return { msPerTurn, actionsPerTurn, workflowId: handle ? id : null };
}

async function readToEnd(stack: BenchStack, workflowId: string): Promise<void> {
  for await (const item of new AgentClient({ client: stack.client }).getHandle(workflowId).events(0)) void item;
}

export type Rounds = Record<Variant, OneRun[]>;

/**
 * `rounds` rounds of every variant in `variants`, the order rotated each
 * round (each variant first as often as the others), after one warm-up round
 * that is not counted (bundles loaded, connections open, caches warm). Every
 * counted run starts on an idle dev server: a rotation keeps each variant's
 * neighbours, so without the wait a heavy row (the peer streamed: a signal
 * and an update per batch of parts) would leave its history and visibility
 * work to the same next rows in every round.
 */
export async function interleaved(ts: TurnStack, variants: readonly Variant[], rounds: number, model: string, turns: number, onRound?: (round: number, row: Partial<Record<Variant, OneRun>>) => void): Promise<Rounds> {
  const out = Object.fromEntries(VARIANTS.map((v) => [v, [] as OneRun[]])) as Rounds;
  for (const v of variants) await oneRun(ts, v, model, turns);
  for (let r = 0; r < rounds; r++) {
    const row: Partial<Record<Variant, OneRun>> = {};
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(r + k) % variants.length];
      await serverIdle(ts.stack.serverPid);
      row[v] = await oneRun(ts, v, model, turns);
    }
    for (const v of variants) out[v].push(row[v]!);
    onRound?.(r, row);
  }
  return out;
}

/** Until the dev server used under a tenth of a core over 200 ms (5 s at most: a busy host may never show it). */
async function serverIdle(pid: number): Promise<void> {
  await settledCpuMs(pid, 200, 0.1, 5000);
}

export type Stat = { min: number; median: number; max: number };
export const stat = (xs: readonly number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor((s.length - 1) / 2)], max: s[s.length - 1] };
};
export const fmt = (s: Stat, digits = 1) => `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;

/** Per round, a's ms per turn over b's (the ratio taken inside each round). */
export const ratios = (r: Rounds, a: Variant, b: Variant) => r[a].map((x, i) => x.msPerTurn / r[b][i].msPerTurn);
