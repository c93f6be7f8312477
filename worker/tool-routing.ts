// Runs go only where their tools are. The design: one task queue per tool set.
// A run records its tools when it starts and every task of it (its loop, its
// model and tool calls, its sub-agents) stays on the queue it was started on,
// so if every worker of a queue offers the same tools, no run is ever taken by
// a worker lacking a tool it may call. Chosen over Worker Versioning, which
// routes by code version (a deploy), not by capability: two tool sets live
// side by side for good, and each would otherwise need a deployment of its
// own. Versioning still covers a rolling deploy that changes a queue's tools.
//
// - The built-in tool set polls AGENT_TASK_QUEUE (default `agent-harness`,
//   the contract's name). Any other set (tool modules, MCP servers, a narrowed
//   AGENT_TOOLS) polls its own queue, `agent-harness-<tool-set hash>`, unless
//   AGENT_TASK_QUEUE names one.
// - Every worker's identity carries its tool-set hash (`tools:1a2b3c4d`), and
//   a worker checks at start who else polls its queue (DescribeTaskQueue): a
//   worker offering other tools there stops it (AGENT_TOOLSET_CHECK=refuse,
//   the default) or is named in a warning (`warn`: a rolling deploy that
//   changes the tools without Worker Versioning, where a call that reaches a
//   worker without its tool is retried until one that has it takes it).
import type { Connection } from '@temporalio/client';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import type { Toolset } from '../activities/tools/toolset.js';
import { DEFAULT_TASK_QUEUE } from '../common/contract.js';
import type { ToolsetCheck, WorkerVersioning } from '../node/config.js';
import { queuePollers } from '../node/queue-pollers.js';
import proto from '@temporalio/proto';
import { ENV_NAMES, type SettingNames } from './setting-names.js';

/** The tool set's fingerprint: its tool names (a run may call any of them by name). */
export function toolsetHash(names: readonly string[]): string {
  return createHash('sha256').update([...names].sort().join('\n')).digest('hex').slice(0, 8);
}

const { WorkerStatus } = proto.temporal.api.enums.v1;

const IDENTITY_HASH = /(?:^|\s)tools:([0-9a-f]{8})(?:\s|$)/;

/** The SDK's default identity (`pid@host`) with the tool-set hash: what other workers read from DescribeTaskQueue. */
export function workerIdentity(toolset: Toolset): string {
  return `${process.pid}@${hostname()} tools:${toolsetHash(toolset.names())}`;
}

export function isBuiltinToolset(toolset: Toolset): boolean {
  return toolsetHash(toolset.names()) === toolsetHash(BUILTIN_TOOLS.map((t) => t.name));
}

/** The queue this worker polls: the named one, the contract's for the built-in set, else the set's own. */
export function taskQueueFor(named: string | null, toolset: Toolset): string {
  if (named !== null) return named;
  return isBuiltinToolset(toolset) ? DEFAULT_TASK_QUEUE : `${DEFAULT_TASK_QUEUE}-${toolsetHash(toolset.names())}`;
}

/** Thrown when joining the queue would let runs reach a worker lacking their tools. */
export class ToolsetConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolsetConflict';
  }
}

export interface QueuePoller {
  identity: string;
  /** The tool-set hash its identity carries, or null (a worker that predates it, or another program). */
  toolset: string | null;
  secondsAgo: number;
}

/** The Worker Deployment version a worker polls as (what the check compares; the behaviour does not matter to it). */
export type PollerVersion = Pick<WorkerVersioning, 'deploymentName' | 'buildId'>;

/**
 * The identities of the queue's workers that told the server they shut down.
 * A worker's last poll stays in DescribeTaskQueue for up to a minute after it
 * stopped (node/queue-pollers.ts), which alone cannot tell a worker that
 * was SIGTERM'd a moment ago from one idling in a long poll; but a worker
 * that shuts down gracefully says so (the SDK's ShutdownWorker, recorded as
 * its status in ListWorkers). A server that does not answer ListWorkers
 * (older, or without it) leaves every recent poller counted, as before.
 */
export async function departedWorkers(conn: Pick<Connection, 'workflowService'>, namespace: string, taskQueue: string): Promise<Set<string>> {
  const gone = new Set<string>();
  try {
    const res = await conn.workflowService.listWorkers({ namespace, pageSize: 1000, query: `TaskQueue = '${taskQueue.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` });
    for (const info of res.workersInfo ?? []) {
      const hb = info.workerHeartbeat;
      if (!hb?.workerIdentity || hb.taskQueue !== taskQueue) continue;
      if (hb.status === WorkerStatus.WORKER_STATUS_SHUTTING_DOWN || hb.status === WorkerStatus.WORKER_STATUS_SHUTDOWN) gone.add(hb.workerIdentity);
    }
  } catch {
    // Not answered: no worker is known to have left.
  }
  return gone;
}

/** The live pollers of the queue (workflow and activity tasks) of this worker's deployment version, if versioned; workers that said they shut down are not. */
export async function livePollers(conn: Pick<Connection, 'workflowService'>, namespace: string, taskQueue: string, versioning: PollerVersion | null): Promise<QueuePoller[]> {
  const byIdentity = new Map<string, QueuePoller>();
  const pollers = (await queuePollers(conn, namespace, taskQueue)).filter((p) => p.live);
  // Asked only when someone polls: the common start (an empty queue) costs no more than before.
  const gone = pollers.length > 0 ? await departedWorkers(conn, namespace, taskQueue) : new Set<string>();
  // Live ones only (node/queue-pollers.ts says what "live" means), and not those that left.
  for (const p of pollers) {
    if (gone.has(p.identity)) continue;
    // Another build of a Worker Deployment runs other runs: its tools may differ.
    if (versioning && p.deploymentName && (p.deploymentName !== versioning.deploymentName || p.buildId !== versioning.buildId)) continue;
    if (!versioning && p.deploymentName) continue;
    byIdentity.set(p.identity, { identity: p.identity, toolset: IDENTITY_HASH.exec(p.identity)?.[1] ?? null, secondsAgo: p.secondsAgo });
  }
  return [...byIdentity.values()];
}

/**
 * Checks the queue's other pollers before this worker joins it. Returns the
 * lines to print; throws ToolsetConflict when a poller offers other tools
 * and `check` is `refuse`.
 */
export async function checkQueueToolsets(
  conn: Pick<Connection, 'workflowService'>,
  opts: { namespace: string; taskQueue: string; toolset: Toolset; versioning: PollerVersion | null; check: ToolsetCheck; names?: SettingNames },
): Promise<string[]> {
  const names = opts.names ?? ENV_NAMES;
  const mine = toolsetHash(opts.toolset.names());
  const pollers = await livePollers(conn, opts.namespace, opts.taskQueue, opts.versioning);
  const other = pollers.filter((p) => p.toolset !== null && p.toolset !== mine);
  const unknown = pollers.filter((p) => p.toolset === null);
  const same = pollers.filter((p) => p.toolset === mine);
  const lines: string[] = [];
  if (same.length > 0) lines.push(`task queue ${opts.taskQueue}: joining ${same.length} worker(s) offering the same tools (tools:${mine})`);
  if (unknown.length > 0) {
    lines.push(`task queue ${opts.taskQueue} is also polled by ${unknown.map(describe).join(', ')}, which do(es) not say what tools it offers: a run started there may reach a worker without the tools it needs`);
  }
  if (other.length > 0) {
    const problem =
      `task queue ${opts.taskQueue} is polled by worker(s) offering other tools than this one (tools:${mine}: ${opts.toolset.names().join(', ')}): ${other.map(describe).join(', ')}. ` +
      `A run started there could be taken by a worker lacking a tool it may call. Give this worker its own queue (${names.ownQueue}), ` +
      `or, for a rolling deploy that changes the tools, use Worker Versioning (${names.versioning}). A worker shut down gracefully (SIGTERM) is not counted; one killed drops off this list within about a minute.`;
    if (opts.check === 'refuse') throw new ToolsetConflict(`${problem} ${names.toolsetWarn} starts it anyway.`);
    lines.push(`warning (${names.toolsetWarn}): ${problem}`);
  }
  return lines;
}

const describe = (p: QueuePoller) => `${p.identity} (seen ${p.secondsAgo} s ago)`;

/**
 * The queue a worker with these tools polls, checked against its other
 * pollers (see checkQueueToolsets), and the lines to print at start.
 * `named`: AGENT_TASK_QUEUE, or null.
 */
export async function chooseTaskQueue(
  conn: Pick<Connection, 'workflowService'>,
  opts: { namespace: string; named: string | null; toolset: Toolset; versioning: PollerVersion | null; check: ToolsetCheck; names?: SettingNames },
): Promise<{ taskQueue: string; notes: string[] }> {
  const taskQueue = taskQueueFor(opts.named, opts.toolset);
  const notes = await checkQueueToolsets(conn, { ...opts, taskQueue });
  if (opts.named === null && taskQueue !== DEFAULT_TASK_QUEUE) {
    notes.unshift(
      `its tools differ from the built-in set, so it polls a task queue of its own, ${taskQueue}: start the runs that need them there ` +
        `(AGENT_TASK_QUEUE=${taskQueue} npm run cli -- run …, or temporal workflow start --task-queue ${taskQueue} …), or name the queue with AGENT_TASK_QUEUE`,
    );
  }
  return { taskQueue, notes };
}
