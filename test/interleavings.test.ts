// Randomized end-to-end exploration on the real dev server: several runs of
// the approval, sub-agent and slow scenarios at once, driven by a seeded
// stream of events — decisions by signal and by update (valid, malformed, for
// other calls, several in one batch), cancels, and worker processes killed
// with SIGKILL and replaced, with decisions sent while no worker is up. Then
// every promise in test/helpers/invariants.ts is checked from each run's result,
// history, trace and workspace.
//
// The seed fixes the plan (which events, in which order); the real timings
// still vary from one execution to the next, which is the point. A failure
// prints the seed: INTERLEAVING_SEEDS=<seed> npx vitest run test/interleavings.test.ts
// CI runs seeds 8 and 21: 54 decisions, 13 of them sent while no worker is up,
// 4 worker kills, 4 cancels over 12 runs.
// A longer soak: npm run soak (more runs, a fresh seed each time).
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../node/project-root.js';
import { describe, expect, inject, it } from 'vitest';
import { approveSignal, cancelSignal, decideUpdate, rejectSignal, statusQuery, transcriptQuery } from '../common/run-messages.js';
import type { AgentInput, RunResult, RunStatusView } from '../common/contract.js';
import { freshWorkspace, useHarness, waitFor } from './helpers/harness.js';
import { brokenPromises, decisionsInHistory, INVARIANTS, workflowTaskFailures } from './helpers/invariants.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';
import { everyExecution, replayFailures } from './replay/executions.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
const RUNS = Number(process.env.INTERLEAVING_RUNS ?? 6);
// One plan per seed; "random" draws fresh ones (the soak), printed with any failure.
// The CI seeds were picked for their plans: both kill the worker twice and send decisions while it is down.
const SEEDS = (process.env.INTERLEAVING_SEEDS ?? '8,21')
  .split(',')
  .map((s) => (s.trim() === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(s)));

/** mulberry32: a small seeded generator, so a plan can be replayed from its seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
  };
}

type Scenario = 'destructive' | 'destructive_twice' | 'research' | 'slow';
const APPROVAL_CALLS: Record<Scenario, string[]> = { destructive: ['c2'], destructive_twice: ['c1', 'c2'], research: [], slow: [] };

interface Run {
  scenario: Scenario;
  input: AgentInput;
  handle: WorkflowHandleWithFirstExecutionRunId;
  maxTurns: number | null;
  maxBudgetUsd: number | null;
}

function planRun(r: ReturnType<typeof rng>): Omit<Run, 'handle'> {
  const scenario = r.pick<Scenario>(['destructive', 'destructive', 'destructive_twice', 'research', 'slow']);
  const maxTurns = r.pick([2, 3, 4, 6, null]);
  const maxBudgetUsd = maxTurns === null ? r.pick([0.0001, 0.002, 0.01]) : r.pick([null, null, 0.002, 0.01]);
  const input: AgentInput = {
    task: 'Free some space, then say which file mentions a timeout.',
    model: scenario,
    workspace: freshWorkspace(),
    limits: { maxTurns, maxBudgetUsd },
    ...(scenario === 'research' ? { tools: ['research'] } : {}),
  };
  return { scenario, input, maxTurns, maxBudgetUsd };
}

const isParkedOrClosed = async (run: Run): Promise<RunStatusView | 'closed' | null> => {
  const d = await run.handle.describe();
  if (d.status.name !== 'RUNNING') return 'closed';
  try {
    const s = await run.handle.query(statusQuery);
    return s.interruption?.type === 'approval' ? s : null;
  } catch (err) {
    // A workflow task that just failed (the server refused a completion because a
    // signal came in meanwhile) is redone at once: ask again. Any other failure
    // is reported by the history check below.
    if (/Workflow Task in failed state/.test(String((err as { cause?: unknown }).cause ?? err))) return null;
    throw err;
  }
};

describe.each(SEEDS)('interleavings, seed %i', (SEED) => {
  it(`${RUNS} runs under a seeded storm of decisions, cancels and worker kills keep every promise`, { timeout: 900_000 }, async () => {
    const r = rng(SEED);
    const taskQueue = `storm-${randomUUID().slice(0, 8)}`;
    const common = { taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot };
    let worker: WorkerProcess | null = await startWorkerProcess(common);
    const inFlight: Promise<unknown>[] = [];
    const log: string[] = [];
    const runs: Run[] = [];
    try {
      for (let i = 0; i < RUNS; i++) {
        const plan = planRun(r);
        const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
          taskQueue,
          workflowId: `storm-${SEED}-${i}-${plan.scenario}-${randomUUID().slice(0, 4)}`,
          args: [plan.input],
          // A task lost with a killed worker is handed out again after 2 s.
          workflowTaskTimeout: '2s',
        });
        runs.push({ ...plan, handle });
      }

      const decide = async (run: Run, verdict: 'approve' | 'reject', how: 'signal' | 'update', callId: unknown, by: string) => {
        log.push(`${how} ${verdict} ${JSON.stringify(callId)} -> ${run.handle.workflowId}${worker ? '' : ' (worker down)'}`);
        if (how === 'signal') {
          const payload = { callId, by, ...(verdict === 'reject' ? { reason: 'not now' } : {}) } as { callId: string };
          await run.handle.signal(verdict === 'approve' ? approveSignal : rejectSignal, payload).catch(() => undefined);
          return;
        }
        const update = run.handle
          .executeUpdate(decideUpdate, { args: [{ callId: callId as string, decision: verdict, by }] })
          .catch((err: unknown) => {
            // Refused by the validator, the run closed first (before or while the update waited), or the server would not take it
            // while a workflow task was being redone: each is an answer, and none reaches history.
            const text = `${String(err)} ${String((err as { cause?: unknown }).cause ?? '')}`;
            if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError || /completed|not found|clos(ed|ing)|Workflow Task in failed state/i.test(text)) return;
            throw err;
          });
        // With no worker up an update cannot be accepted yet: do not wait for it here.
        if (worker) await Promise.race([update, new Promise((res) => setTimeout(res, 2000))]);
        inFlight.push(update);
      };
      const targetFor = (run: Run): unknown => {
        const calls = APPROVAL_CALLS[run.scenario];
        return r.pick<unknown>([...calls, ...calls, ...calls, 'c9', 5, null, calls[0] ?? 'c1']);
      };

      // The storm.
      let downFor = 0;
      for (let step = 0; step < RUNS * 4; step++) {
        const run = r.pick(runs);
        const kind = r.pick(['decide', 'decide', 'decide', 'decide', 'batch', 'batch', 'settle', 'settle', 'cancel', 'restart'] as const);
        if (kind === 'restart' && worker) {
          log.push('SIGKILL the worker');
          await worker.kill();
          worker = null;
          downFor = 1 + r.int(3);
          continue;
        }
        if (kind === 'settle' && worker) {
          // Pacing only: the storm goes on if the run is slow; the end below is strict.
          await waitFor(`${run.handle.workflowId} parked or closed`, () => isParkedOrClosed(run), 30_000).catch(() => log.push(`${run.handle.workflowId} not settled within 30 s`));
        } else if (kind === 'cancel') {
          log.push(`cancel -> ${run.handle.workflowId}`);
          await run.handle.signal(cancelSignal, { reason: 'storm' }).catch(() => undefined);
        } else if (kind === 'batch') {
          // Two or three decisions for one call, sent back to back: they can reach one activation.
          const callId = targetFor(run);
          const n = 2 + r.int(2);
          await Promise.all(Array.from({ length: n }, () => decide(run, r.pick(['approve', 'reject'] as const), r.pick(['signal', 'update'] as const), callId, r.pick(['alice', 'bob']))));
        } else if (kind === 'decide') {
          await decide(run, r.pick(['approve', 'reject'] as const), r.pick(['signal', 'update'] as const), targetFor(run), r.pick(['alice', 'bob']));
        }
        if (!worker && --downFor <= 0) {
          log.push('a new worker process');
          worker = await startWorkerProcess(common);
        }
      }
      if (!worker) worker = await startWorkerProcess(common);

      // Bring every run to an end: decide whatever still waits.
      const results: RunResult[] = [];
      for (const run of runs) {
        for (;;) {
          // Every run must come to rest: a run that never parks or closes is stuck, and that is a failure.
          const s = await waitFor(`${run.handle.workflowId} parked or closed`, () => isParkedOrClosed(run), 180_000).catch(async (err: unknown) => {
            const events = (await run.handle.fetchHistory()).events ?? [];
            throw new Error(`${String(err)} (seed ${SEED}); its last events: ${events.slice(-12).map((e) => String(e.eventType)).join(', ')}; storm:\n${log.join('\n')}`);
          });
          if (s === 'closed') break;
          const awaited = s.interruption?.type === 'approval' ? s.interruption.callId : null;
          await decide(run, r.pick(['approve', 'reject'] as const), 'signal', awaited, 'closer');
          await waitFor(`${run.handle.workflowId} to move past ${String(awaited)}`, async () => {
            const again = await isParkedOrClosed(run);
            if (again === 'closed' || again === null) return true;
            return again.interruption?.type === 'approval' && again.interruption.callId !== awaited ? true : null;
          });
        }
        results.push(await run.handle.result());
      }
      // An update admitted while no worker was up, for a run that then closed, may never
      // get an answer from the server (its poll just waits): give the rest a moment, then
      // move on. Only what reached history counts, and that is read from history below.
      const settled = await Promise.race([Promise.allSettled(inFlight).then(() => true), new Promise<false>((res) => setTimeout(() => res(false), 15_000))]);
      if (!settled) log.push('some updates never got an answer (admitted, then their run closed)');

      // Every run's history replays on this code from its first event: the
      // workers ran with a cache, so their tasks mostly did not replay, and a
      // replay after a restart must take exactly the path the cached run took.
      // Every execution: a run that continued as new replays from each one's carried state.
      const executions = await everyExecution(h.client, runs.map((run) => ({ workflowId: run.handle.workflowId, runId: run.handle.firstExecutionRunId })));
      const notReplayed = await replayFailures({ codePath: inject('workflowBundlePath') }, executions);
      if (notReplayed.length) throw new Error(`${notReplayed.length} executions do not replay:\n${notReplayed.join('\n')}`);

      // Check every promise on every run.
      const report: string[] = [];
      for (const [i, run] of runs.entries()) {
        const id = run.handle.workflowId;
        await waitFor(`the trace of ${id} to close`, () => h.events(id).some((l) => l.type === 'run_stopped'));
        const child = `${id}/m1/r1/research`;
        const broken = brokenPromises({
          result: results[i],
          input: { maxTurns: run.maxTurns, maxBudgetUsd: run.maxBudgetUsd, workspace: run.input.workspace! },
          transcript: await run.handle.query(transcriptQuery),
          events: h.events(id),
          trace: h.trace(id),
          decisionsSent: await decisionsInHistory(h.client, id),
          taskFailures: await workflowTaskFailures(h.client, id),
          childTurnCosts: h.events(child).filter((l) => l.type === 'turn').map((l) => Number(l.turnCostUsd)),
          workspaceRoot: h.workspaceRoot,
        });
        report.push(`${id}: ${results[i].status} turns=${results[i].turns} cost=$${results[i].costUsd.toFixed(6)}${broken.length ? ` BROKEN: ${broken.join(' | ')}` : ''}`);
      }
      const count = (re: RegExp) => log.filter((l) => re.test(l)).length;
      console.log(
        `interleavings (seed ${SEED}, ${RUNS} runs, ${Object.keys(INVARIANTS).length} invariants each; ` +
          `${count(/^(signal|update) /)} decisions, ${count(/worker down/)} of them while no worker was up, ` +
          `${count(/^cancel/)} cancels, ${count(/^SIGKILL/)} worker kills):\n${report.join('\n')}`,
      );
      const failures = report.filter((l) => l.includes('BROKEN'));
      expect(failures, `seed ${SEED}; events:\n${log.join('\n')}`).toEqual([]);
    } catch (err) {
      // Every run's history, for a replay test: the most useful thing a failure leaves behind.
      const dir = join(PROJECT_ROOT, '.data', 'failed-histories', `seed-${SEED}`);
      mkdirSync(dir, { recursive: true });
      for (const run of runs) {
        const history = await run.handle.fetchHistory().catch(() => null);
        if (history) writeFileSync(join(dir, `${run.handle.workflowId.replaceAll('/', '_')}.json`), historyToJSON(history));
      }
      throw new Error(`${String(err)}\n(histories of seed ${SEED} saved in ${dir})`, { cause: err });
    } finally {
      await worker?.kill();
    }
  });
});
