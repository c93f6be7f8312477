// What a run costs the server (and the Temporal Cloud bill), ours beside the
// peer on the same server: Actions per turn from the runs' histories,
// heartbeat RPCs per minute of a running model call and of a running tool
// from the server's metrics, and how long a Stop takes to reach a running
// call when it runs in the loop's own worker process and in another one.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readTrace } from '../node/trace-format.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { DEFAULT_HEARTBEAT_MS } from '../node/heartbeat.js';
import { addFault, providerRequests } from '../dev/provider/control.js';
import { cancelSignal } from '../common/run-messages.js';
import { startingAttributes } from '../workflows/visibility.js';
import type { AgentInput } from '../common/contract.js';
import { countActions, type ActionCount } from './actions.js';
import { LONG_CALL, longCallTask } from './long-call-tool.js';
import { PEER_TASK_QUEUE, startPeer } from './peer-process.js';
import { heartbeatsDuring, serverActionsDuring, type ServerActions } from './server-metrics.js';
import type { WorkflowHandle } from '@temporalio/client';
import { startBenchStack, type BenchStack } from './stack.js';

/** A run's Actions twice: by Cloud's rules from its history, and as the server's own counter saw them. */
export type CountedRun = ActionCount & { server: ServerActions };

export interface ActionFigures {
  turns: number;
  /** A `runaway` run as the project's CLI starts it (its starting search attributes set). */
  ours: CountedRun;
  /** The same run started bare (`temporal workflow start`). */
  oursBare: CountedRun;
  peer: CountedRun;
  /** A `runaway_wide` run (three read-only calls a turn), ours as the CLI starts it and the peer's. */
  wide: CountedRun;
  peerWide: CountedRun;
  /** A `plan` run (3 turns), as the CLI starts it and bare. */
  plan: ActionCount;
  planBare: ActionCount;
}

/** Ours starts runs the way `agent-harness run` does. */
function startOurs(stack: BenchStack, input: AgentInput, id: string, bare = false) {
  return stack.client.workflow.start('agentRun', { taskQueue: stack.taskQueue, workflowId: id, args: [input], ...(bare ? {} : { typedSearchAttributes: startingAttributes(input) }) });
}

export async function measureActions(stack: BenchStack, turns: number): Promise<ActionFigures> {
  const runaway: AgentInput = { task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: turns, maxBudgetUsd: null } };
  const plan: AgentInput = { task: 'Which file mentions a timeout?', model: 'plan' };
  // One run at a time: the server's counter is read around each.
  const counted = async (start: () => Promise<WorkflowHandle>): Promise<CountedRun> => {
    const { value: handle, actions } = await serverActionsDuring(stack.metricsUrl, async () => {
      const h = await start();
      await h.result();
      return h;
    });
    return { ...countActions(await handle.fetchHistory()), server: actions };
  };
  const ours = (input: AgentInput, bare: boolean) => counted(() => startOurs(stack, input, `bill-${input.model}-${randomUUID().slice(0, 8)}`, bare));
  const peer = (model: string) => counted(() => stack.client.workflow.start('peerAgent', { taskQueue: PEER_TASK_QUEUE, workflowId: `bill-peer-${model}-${randomUUID().slice(0, 8)}`, args: ['Keep listing files.', model, turns] }));
  return {
    turns,
    ours: await ours(runaway, false),
    oursBare: await ours(runaway, true),
    peer: await peer('runaway'),
    wide: await ours({ ...runaway, model: 'runaway_wide' }, false),
    peerWide: await peer('runaway_wide'),
    plan: await ours(plan, false),
    planBare: await ours(plan, true),
  };
}

export interface HeartbeatFigures {
  seconds: number;
  oursModel: number;
  oursTool: number;
  peerModel: number;
}

/** Heartbeat RPCs per minute of one running call of `seconds` (a model reply held that long; long_call). */
export async function measureHeartbeats(stack: BenchStack, seconds: number): Promise<HeartbeatFigures> {
  const perMinute = (n: number) => (n / seconds) * 60;
  const held = async (marker: string) => addFault(stack.providerUrl, { match: { taskIncludes: marker, turn: 0 }, fault: { type: 'delay', ms: seconds * 1000 }, times: 1 });

  const oursModelMarker = `[hb-model-${randomUUID().slice(0, 8)}]`;
  await held(oursModelMarker);
  const oursModel = await heartbeatsDuring(stack.metricsUrl, async () => (await startOurs(stack, { task: `Which file? ${oursModelMarker}`, model: 'plan' }, `hb-model-${randomUUID().slice(0, 8)}`)).result());

  const oursTool = await heartbeatsDuring(stack.metricsUrl, async () =>
    (await startOurs(stack, { task: longCallTask(seconds), model: 'script', tools: [LONG_CALL] }, `hb-tool-${randomUUID().slice(0, 8)}`)).result(),
  );

  const peerMarker = `[hb-peer-${randomUUID().slice(0, 8)}]`;
  await held(peerMarker);
  const peerModel = await heartbeatsDuring(stack.metricsUrl, async () =>
    (await stack.client.workflow.start('peerAgent', { taskQueue: PEER_TASK_QUEUE, workflowId: `hb-peer-${randomUUID().slice(0, 8)}`, args: [`Keep listing files. ${peerMarker}`, 'runaway', 1] })).result(),
  );
  return { seconds, oursModel: perMinute(oursModel.heartbeats), oursTool: perMinute(oursTool.heartbeats), peerModel: perMinute(peerModel.heartbeats) };
}

export interface StopFigures {
  /** Stop → the call saw it (`tool_cancelled` / `model_cancelled`), ms. */
  tool: number[];
  model: number[];
  /** Stop → the run's result, ms. */
  toolResult: number[];
  modelResult: number[];
}

/**
 * `n` Stops of a running tool and `n` of a running model call. `where`:
 * `same` — one worker runs the loop and the calls; `other` — the loop runs in
 * this process, the calls in a worker process of their own, so a Stop reaches
 * them only through a heartbeat's answer. Each Stop lands at a random moment
 * of the heartbeat interval.
 */
export async function measureStops(where: 'same' | 'other', n: number): Promise<StopFigures> {
  const stack = await startBenchStack({ loopOnly: where === 'other' });
  const running = stack.worker.run();
  const calls = where === 'other' ? await startActivityWorker(stack) : null;
  const out: StopFigures = { tool: [], model: [], toolResult: [], modelResult: [] };
  const pause = () => new Promise((r) => setTimeout(r, Math.random() * DEFAULT_HEARTBEAT_MS));
  try {
    for (let i = 0; i < n; i++) {
      const id = `stop-tool-${where}-${i}`;
      const handle = await startOurs(stack, { task: longCallTask(600), model: 'script', tools: [LONG_CALL] }, id);
      while (!readTrace(stack.traceDir, id).some((l) => l.type === 'tool_progress')) await new Promise((r) => setTimeout(r, 20));
      await pause();
      const stopAt = Date.now();
      await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      await handle.result();
      out.toolResult.push(Date.now() - stopAt);
      out.tool.push(msAfter(stack, id, 'tool_cancelled', stopAt));
    }
    for (let i = 0; i < n; i++) {
      const id = `stop-model-${where}-${i}`;
      const marker = `[${id}]`;
      await addFault(stack.providerUrl, { match: { taskIncludes: marker, turn: 0 }, fault: { type: 'delay', ms: 600_000 }, times: 1 });
      const handle = await startOurs(stack, { task: `Which file? ${marker}`, model: 'plan' }, id);
      while (!(await providerRequests(stack.providerUrl, marker)).some((r) => r.pending)) await new Promise((r) => setTimeout(r, 20));
      await pause();
      const stopAt = Date.now();
      await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      await handle.result();
      out.modelResult.push(Date.now() - stopAt);
      out.model.push(msAfter(stack, id, 'model_cancelled', stopAt));
    }
  } finally {
    stack.worker.shutdown();
    await running;
    calls?.kill('SIGTERM');
    await stack.close();
  }
  return out;
}

function msAfter(stack: BenchStack, id: string, type: string, stopAt: number): number {
  const line = readTrace(stack.traceDir, id).find((l) => l.type === type);
  if (!line) throw new Error(`run ${id}: no ${type} line: the call never saw the Stop`);
  return Date.parse(line.ts) - stopAt;
}

/** ./activity-worker.ts on the stack's queue: model and tool calls in a process of their own. */
async function startActivityWorker(stack: BenchStack): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/activity-worker.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: stack.address, AGENT_TASK_QUEUE: stack.taskQueue, LLM_BASE_URL: stack.providerUrl, AGENT_WORKSPACE: stack.workspaceRoot, TRACE_DIR: stack.traceDir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (b: Buffer) => b.toString().includes('activity worker ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the activity worker exited with ${code}`)));
  });
  return child;
}

/** The stack and the peer the Actions and heartbeat figures are measured on. */
export async function withPeerStack<T>(fn: (stack: BenchStack) => Promise<T>): Promise<T> {
  const stack = await startBenchStack();
  const peer = await startPeer(stack);
  const running = stack.worker.run();
  try {
    return await fn(stack);
  } finally {
    stack.worker.shutdown();
    peer.kill('SIGTERM');
    await running;
    await stack.close();
  }
}
