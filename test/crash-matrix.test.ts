// The crash matrix: a worker process killed with SIGKILL after each trace
// event and in the middle of a running activity, for `plan`, `destructive`
// (approved) and `slow`; a new worker process takes over. Every run must end
// exactly like the uncrashed one: same result, turns and cost; no recorded tool
// run again; the interrupted delete lands once; a gapless, duplicate-free trace.
// One honest exception: a kill between the delete's claim and its recorded
// result leaves its outcome unknown, and the retry says so to the model
// (docs/effects.md) instead of the uncrashed run's words — a longer tool
// result, so a slightly larger cost.
import type { WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TraceLine } from '../node/trace-format.js';
import { approveSignal, transcriptQuery } from '../common/run-messages.js';
import { AGENT_AWAITING_CALL } from '../common/search-attributes.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import { addFault, freshWorkspace, providerRequests, useHarness, waitFor } from './helpers/harness.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
type Scenario = 'plan' | 'destructive' | 'slow';
type Kill = { afterSeq: number } | { mid: 'model' | 'delete' | 'scan' } | null;

const TASK = 'Which file mentions a timeout?';
const EVENTS: Record<Scenario, number> = { plan: 9, destructive: 11, slow: 6 };
const MID: Record<Scenario, 'model' | 'delete' | 'scan'> = { plan: 'model', destructive: 'delete', slow: 'scan' };

interface Outcome {
  result: RunResult;
  trace: TraceLine[];
  modelRequestsPerTurn: number[];
  deletedFile: boolean;
  /** The delete's result as the model read it (destructive only). */
  deleteResult: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Approves c2 once the run is parked on it in committed state: the search
 * attributes that the parking workflow task upserted, as describe reads them
 * from the server. A status query is not enough: a worker without the run in
 * its cache replays whatever history holds, including an activity result that
 * no workflow task has processed yet (the worker that took that task was just
 * killed), so it can say "parked on c2" a task ahead of the run; the run takes
 * an approval sent then only if the redone task parks on c2.
 * Every call is bounded and retried: a lost approval would park the run forever.
 */
async function approveWhenParked(handle: Awaited<ReturnType<typeof h.client.workflow.start>>, done: () => boolean, log: string[]) {
  while (!done()) {
    const d = await Promise.race([handle.describe().catch((e: Error) => (log.push(`describe: ${e.message}`), null)), sleep(3000).then(() => null)]);
    if (d?.typedSearchAttributes.get(AGENT_AWAITING_CALL) === 'c2') {
      try {
        await handle.signal(approveSignal, { callId: 'c2', by: 'crash-test' });
        log.push('approved c2');
        return;
      } catch (e) {
        log.push(`signal: ${(e as Error).message}`);
      }
    }
    await sleep(200);
  }
}

/** `p`'s value, or after `ms` an error saying what did not happen and where the run stands. */
async function within<T>(what: string, p: Promise<T>, ms: number, report: () => Promise<string>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), ms)));
  try {
    const r = await Promise.race([p, late]);
    if (r !== 'late') return r;
  } finally {
    clearTimeout(timer);
  }
  throw new Error(`${what}: nothing after ${ms} ms\n${await report()}`);
}

/** The step the running activity last heartbeated, as the server holds it (0 when none). */
async function heartbeatStep(handle: WorkflowHandle): Promise<number> {
  const d = await handle.describe();
  const payload = d.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0];
  if (!payload) return 0;
  const details = h.client.options.loadedDataConverter.payloadConverter.fromPayload<{ step?: number }>(payload);
  return details?.step ?? 0;
}

async function runCase(scenario: Scenario, kill: Kill): Promise<Outcome> {
  const id = randomUUID().slice(0, 8);
  const taskQueue = `crash-${id}`;
  const workspace = freshWorkspace();
  // Digits only: every marker costs the same tokens, so costs compare exactly.
  const m = `[run-${String(Math.floor(1e7 + Math.random() * 9e7))}]`;
  const input: AgentInput = { task: `${TASK} ${m}`, model: scenario, workspace };
  if (kill && 'mid' in kill && kill.mid === 'model') {
    await addFault(h.providerUrl, { match: { taskIncludes: m, turn: 1 }, fault: { type: 'delay', ms: 3000 }, times: 1 });
  }
  const common = { taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot };
  const first = await startWorkerProcess({
    ...common,
    ...(kill && 'mid' in kill && kill.mid === 'delete' ? { crashAt: 'delete_file:after_unlink' as const } : {}),
  });
  const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
    taskQueue,
    workflowId: `crash-${scenario}-${id}`,
    args: [input],
    // A task lost with its worker is handed out again after 2 s.
    workflowTaskTimeout: '2s',
  });
  let finished = false;
  const approverLog: string[] = [];
  const approver = scenario === 'destructive' ? approveWhenParked(handle, () => finished, approverLog) : Promise.resolve();
  const trace = () => h.trace(handle.workflowId);
  let second: WorkerProcess | null = null;
  /** Where the run stands: for a case that gets stuck. */
  const report = async () => {
    const events = (await handle.fetchHistory()).events ?? [];
    const types = events.map((e) => `${e.eventId} ${String(e.eventType)}`);
    return [
      `kill: ${JSON.stringify(kill)}; workflow ${handle.workflowId}`,
      `history (last 30): ${types.slice(-30).join(', ')}`,
      `trace: ${trace().map((l) => `${l.seq}:${l.type}`).join(' ')}`,
      `approver: ${approverLog.join(' | ')}`,
      `first worker:\n${first.output().slice(-3000)}`,
      `second worker:\n${second?.output().slice(-3000) ?? '(none)'}`,
    ].join('\n');
  };
  try {
    if (kill) {
      if ('afterSeq' in kill) {
        await waitFor(`seq ${kill.afterSeq}`, () => trace().some((l) => l.seq === kill.afterSeq && l.step === undefined));
      } else if (kill.mid === 'model') {
        // The provider logs a request on arrival: the turn-2 call is now held by its 3 s delay.
        await waitFor('the turn-2 model request, held', async () => (await providerRequests(h.providerUrl, m)).some((r) => r.turn === 1 && r.pending));
      } else if (kill.mid === 'scan') {
        // The server has a step (the first progress heartbeat goes out at once;
        // later ones at most every 5 s), so a retry can resume after it.
        await waitFor('a heartbeat with a step on the server', async () => (await heartbeatStep(handle)) >= 1);
      }
      // It kills itself mid-delete (if the delete never runs, say so rather than wait forever).
      if ('mid' in kill && kill.mid === 'delete') await within('the first worker dying mid-delete', first.exited, 240_000, report);
      else await first.kill();
      second = await startWorkerProcess(common);
    }
    const result = await within('the run\'s result', handle.result(), 240_000, report);
    finished = true;
    await approver;
    // The result can reach us before the worker's sink writes the last line.
    await waitFor('run_stopped in the trace', () => trace().some((l) => l.type === 'run_stopped'));
    const requests = await providerRequests(h.providerUrl, m);
    const perTurn = Array.from({ length: result.turns }, (_, t) => requests.filter((r) => r.turn === t).length);
    const deleteResult = scenario === 'destructive' ? ((await handle.query(transcriptQuery)).find((x) => x.role === 'tool' && x.tool_call_id === 'c2')?.content ?? null) : null;
    return { result, trace: trace(), modelRequestsPerTurn: perTurn, deletedFile: !existsSync(join(h.workspaceRoot, workspace, 'access.log')), deleteResult };
  } finally {
    finished = true;
    await first.kill();
    await second?.kill();
  }
}

const workflowLines = (t: TraceLine[]) => t.filter((l) => l.step === undefined);
const execs = (t: TraceLine[]) => t.filter((l) => l.type === 'tool_exec');
const matrix: string[] = [];
afterAll(() => console.log(`crash matrix (kill point x scenario -> outcome):\n${matrix.join('\n')}`));

/** Runs `fn` over `items`, `width` at a time. */
async function inBatches<T, R>(items: T[], width: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

describe.each(['plan', 'destructive', 'slow'] as const)('crash matrix: %s', (scenario) => {
  it('every kill point ends like the uncrashed run', { timeout: 600_000 }, async () => {
    const baseline = await runCase(scenario, null);
    const kills: Kill[] = [
      ...Array.from({ length: EVENTS[scenario] }, (_, i) => ({ afterSeq: i + 1 })),
      { mid: MID[scenario] },
    ];
    expect(workflowLines(baseline.trace)).toHaveLength(EVENTS[scenario]);
    const outcomes = await inBatches(kills, 3, (k) => runCase(scenario, k).then((o) => ({ k, o })));
    for (const { k, o } of outcomes) {
      const label = k && 'afterSeq' in k ? `after seq ${k.afterSeq} (${baseline.trace.find((l) => l.seq === k.afterSeq && l.step === undefined)?.type})` : `mid-${k && 'mid' in k ? k.mid : ''}`;
      const { result: r } = o;
      // Same exit, same figures, same money.
      expect({ label, status: r.status, output: r.output, turns: r.turns, toolRuns: r.toolRuns }).toEqual({
        label,
        status: baseline.result.status,
        output: baseline.result.output,
        turns: baseline.result.turns,
        toolRuns: baseline.result.toolRuns,
      });
      // A kill between the delete's claim and its record: the retry says the outcome is unknown, never deletes again.
      const unknown = o.deleteResult !== null && o.deleteResult.startsWith('outcome unknown: a previous attempt on ');
      if (k && 'mid' in k && k.mid === 'delete') expect(unknown).toBe(true);
      if (!unknown) {
        expect(o.deleteResult).toBe(baseline.deleteResult);
        expect(r.costUsd).toBeCloseTo(baseline.result.costUsd, 12);
      }
      // The trace: the same events, each once, seq without gaps.
      const lines = workflowLines(o.trace);
      expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
      expect(lines.map((l) => l.type)).toEqual(workflowLines(baseline.trace).map((l) => l.type));
      // A tool whose completion was recorded never runs again: a call's only
      // other executions are Temporal's retries (attempt 2, 3…) of an attempt
      // the kill interrupted, never the same attempt twice.
      const attempts = new Map<string, number[]>();
      for (const e of execs(o.trace)) attempts.set(String(e.callId), [...(attempts.get(String(e.callId)) ?? []), Number(e.attempt)]);
      // (Attempt 1 may be missing: a worker killed as the task reached it never started the tool.)
      for (const list of attempts.values()) expect(list).toEqual([...new Set(list)].sort((x, y) => x - y));
      const midTool = k && 'mid' in k && k.mid !== 'model';
      const retried = [...attempts.entries()].filter(([, list]) => list.length > 1);
      if (midTool) expect(retried).toHaveLength(1);
      // No turn is counted twice. The provider may be asked again only for a
      // model call the kill interrupted, and each such call is a visible retry.
      const extra = o.modelRequestsPerTurn.reduce((a, n, t) => a + n - baseline.modelRequestsPerTurn[t], 0);
      // (A retry may also follow an attempt that died before it sent anything.)
      expect(extra).toBeGreaterThanOrEqual(0);
      expect(extra).toBeLessThanOrEqual(o.trace.filter((l) => l.type === 'model_retry').length);
      if (k && 'mid' in k && k.mid === 'model') expect(extra).toBe(1);
      // The file is gone — unless a kill landed between the delete's claim and
      // its unlink: the retry then reports the outcome unknown rather than act
      // blind, and the file stays (the crash point after the unlink: gone).
      if (scenario === 'destructive') {
        const mayRemain = unknown && !(k && 'mid' in k && k.mid === 'delete');
        expect({ label, deleted: o.deletedFile || mayRemain, deleteResult: o.deleteResult }).toEqual({ label, deleted: true, deleteResult: o.deleteResult });
      }
      if (scenario === 'slow' && midTool) {
        // The retry resumed after the last step the server had heartbeated, not from the start.
        const retry = execs(o.trace).find((l) => l.attempt === 2);
        expect(Number(retry?.resumeFromStep)).toBeGreaterThanOrEqual(1);
        // The retry's own lines (one writer, in the order it wrote them) end the scan.
        expect(o.trace.filter((l) => l.type === 'tool_progress' && l.attempt === 2).at(-1)?.label).toBe('scanned 1200 of 1200 files');
      }
      if (unknown) expect(retried).toHaveLength(1);
      const notes = [
        ...(unknown ? ['delete outcome unknown (said so, not deleted again)'] : []),
        ...(retried.length ? [`tool retried: ${retried.map(([c, l]) => `${c} (${l.length} attempts)`).join(', ')}`] : []),
        ...(extra ? [`model call retried: ${extra}`] : []),
      ];
      matrix.push(`${scenario} | ${label} | ${r.status}, turns=${r.turns}, tools=${r.toolRuns}, cost=$${r.costUsd.toFixed(6)}${unknown ? '' : ' = uncrashed'}${notes.length ? `; ${notes.join('; ')}` : ''}`);
    }
  });
});
