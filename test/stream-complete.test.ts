// The whole stream (issue 34, items 1–3): a reader may subscribe the moment
// `start` returns; it gets every item from its offset, offsets contiguous,
// however far behind, across continue-as-new and after the run closed (what
// an execution no longer carries is read back from the closed execution's
// history, replayed by a worker); and a raw @temporalio/workflow-streams
// subscriber that keeps up reads run_stopped on a run of about a second.
// Real dev server (continue-as-new suggested at 150 events), real worker,
// the scripted provider.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { freshWorkspace, useHarness } from './helpers/harness.js';
import { admitted } from './helpers/admitted-update.js';
import { AgentClient } from '../client/agent-client.js';
import { decideUpdate } from '../common/run-messages.js';
import { isGap, isTraceEvent, type RunEventItem, type StreamEvent } from '../common/stream-items.js';

const h = useHarness();
const agents = () => new AgentClient({ client: h.client, taskQueue: h.taskQueue });

/** The workflow's own trace events as the trace file has them (seq, type). */
const traceEvents = (workflowId: string) =>
  h
    .trace(workflowId)
    .filter((l) => l.step === undefined)
    .map((l) => ({ seq: l.seq, type: l.type }));

async function readAll(workflowId: string, from = 0, pause?: () => Promise<void>): Promise<RunEventItem[]> {
  const out: RunEventItem[] = [];
  for await (const item of agents().getHandle(workflowId).events(from)) {
    out.push(item);
    if (pause) await pause();
  }
  return out;
}

function expectWhole(items: RunEventItem[], workflowId: string, from = 0): void {
  expect(items.filter(isGap)).toEqual([]);
  expect(items.map((i) => i.offset)).toEqual(items.map((_, k) => from + k));
  const events = items.filter((i): i is StreamEvent & { offset: number; seq: number; type: string } => !isGap(i) && isTraceEvent(i));
  expect(events.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(from === 0 ? traceEvents(workflowId) : traceEvents(workflowId).slice(-events.length));
  expect(items.at(-1)).toMatchObject({ type: 'run_stopped' });
}

describe('readable from the first instant', () => {
  it('events() right after start() reads the whole run, every time (it threw "No registered handler for update" about half the time)', { timeout: 300_000 }, async () => {
    for (let i = 0; i < 8; i += 1) {
      const workflowId = `first-instant-${i}-${freshWorkspace()}`;
      const handle = await agents().start({ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() }, { workflowId });
      h.track(workflowId);
      const items: RunEventItem[] = [];
      for await (const e of handle.events()) items.push(e);
      expect((await handle.result()).status).toBe('completed');
      expectWhole(items, workflowId);
    }
  });
});

describe('no silent gaps', () => {
  // About 5 turns per execution: the run continues as new at this history size (runaway turns are alike).
  const CAN_BYTES = 9_000;

  it('a closed run of 80 turns continuing as new every few turns: events(0) gives every item, offsets contiguous; events(k) from the middle too', { timeout: 300_000 }, async () => {
    const workflowId = `whole-${freshWorkspace()}`;
    const handle = await h.start({ task: 'Keep listing.', model: 'runaway', limits: { maxTurns: 80, maxBudgetUsd: null }, continueAsNewAtHistoryBytes: CAN_BYTES, workspace: freshWorkspace() }, workflowId);
    expect((await handle.result()).status).toBe('max_turns_exceeded');
    const trace = traceEvents(workflowId);
    expect(trace.filter((e) => e.type === 'continued_as_new').length).toBeGreaterThan(8);
    const all = await readAll(workflowId);
    expectWhole(all, workflowId);
    expect(all.filter((e) => e.type === 'turn')).toHaveLength(80);
    const middle = await readAll(workflowId, 201);
    expect(middle).toEqual(all.slice(201));
  });

  it('a reader attached before the start that sleeps between reads gets every item in order across continue-as-new', { timeout: 300_000 }, async () => {
    const workflowId = `slow-reader-${freshWorkspace()}`;
    const reading = (async () => {
      // Attached before the run exists: waits for it, then reads slower than the run publishes (it ends many turns behind).
      for (;;) {
        try {
          return await readAll(workflowId, 0, () => new Promise((r) => setTimeout(r, 400)));
        } catch (err) {
          if (!(err instanceof Error && err.name === 'RunNotFoundError')) throw err;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();
    const handle = await h.start({ task: 'Keep listing.', model: 'runaway', limits: { maxTurns: 40, maxBudgetUsd: null }, continueAsNewAtHistoryBytes: CAN_BYTES, workspace: freshWorkspace() }, workflowId);
    expect((await handle.result()).status).toBe('max_turns_exceeded');
    const items = await reading;
    expect(traceEvents(workflowId).filter((e) => e.type === 'continued_as_new').length).toBeGreaterThan(3);
    expectWhole(items, workflowId);
    expect(items.filter((e) => e.type === 'turn')).toHaveLength(40);
  });

  it('`follow --from 0` on a closed run prints every turn, from a machine without the worker\'s disk', { timeout: 300_000 }, async () => {
    const workflowId = `follow-whole-${freshWorkspace()}`;
    const handle = await h.start({ task: 'Keep listing.', model: 'runaway', limits: { maxTurns: 40, maxBudgetUsd: null }, continueAsNewAtHistoryBytes: CAN_BYTES, workspace: freshWorkspace() }, workflowId);
    await handle.result();
    const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
    const elsewhere = mkdtempSync(join(tmpdir(), 'no-trace-'));
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(bin, ['follow', workflowId, '--from', '0'], { env: { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: elsewhere }, timeout: 240_000 }, (err, out, stderr) => {
        // Its exit code is the run's (max_turns_exceeded is not 0): the output is what matters here.
        if (err && (err as { code?: unknown }).code === undefined) reject(err);
        else resolve(`${out}${stderr ? `\nstderr: ${stderr}` : ''}`);
      }),
    );
    const turns = stdout.split('\n').filter((l) => /^turn \d+: /.test(l));
    expect(turns.map((l) => Number(/^turn (\d+)/.exec(l)![1]))).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(stdout).not.toContain('cannot be shown');
  });
});

describe('the tail reaches raw subscribers', () => {
  it('a raw workflow-streams subscriber from offset 0 of a plan run (about a second) reads to run_stopped', { timeout: 300_000 }, async () => {
    for (let i = 0; i < 5; i += 1) {
      const workflowId = `raw-tail-${i}-${freshWorkspace()}`;
      const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() }, workflowId);
      const raw = WorkflowStreamClient.create(h.client, workflowId);
      const seen: { offset: number; type: string }[] = [];
      for await (const item of raw.topic<StreamEvent>('events').subscribe(0)) seen.push({ offset: item.offset, type: item.data.type });
      expect((await handle.result()).status).toBe('completed');
      expect(seen.map((s) => s.offset)).toEqual(seen.map((_, k) => k));
      expect(seen.at(-1)?.type, `run ${i}: ${seen.length} items`).toBe('run_stopped');
    }
  });
});

describe('readable from the first instant, deterministically', () => {
  it('a poll and a decide that reach the run in its first workflow task (sent before any worker polls): the poll is answered, the decide refused by the run, neither "No registered handler"', { timeout: 120_000 }, async () => {
    const worker = await h.prepareWorker({ taskQueue: `first-task-${freshWorkspace()}` });
    try {
      const workflowId = `first-task-${freshWorkspace()}`;
      const handle = await h.client.workflow.start('agentRun', { taskQueue: worker.taskQueue, workflowId, args: [{ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() }] });
      h.replayQueue(worker.taskQueue);
      const poll = handle.executeUpdate('__temporal_workflow_stream_poll', { updateId: 'poll-1', args: [{ topics: ['events'], from_offset: 0 }] });
      const decide = handle.executeUpdate(decideUpdate, { updateId: 'decide-1', args: [{ callId: 'c1', decision: 'approve', by: 'mallory' }] });
      const settled = Promise.allSettled([poll, decide]);
      // Both held by the server before the worker's first poll, so they arrive with the run's start.
      for (const updateId of ['poll-1', 'decide-1']) {
        await admitted(h.client, workflowId, handle.firstExecutionRunId, updateId);
      }
      worker.run();
      const [p, d] = await settled;
      const why = (r: PromiseSettledResult<unknown>) => (r.status === 'rejected' ? String((r.reason as { cause?: unknown }).cause ?? r.reason) : 'answered');
      expect(why(p)).toBe('answered');
      expect(why(d)).not.toMatch(/No registered handler/);
      expect(why(d)).toMatch(/awaiting a decision.*run is starting/);
      expect((await handle.result()).status).toBe('completed');
    } finally {
      // Run before shutting down (a worker never run holds its connection): nothing is left for it by then.
      worker.run();
      await worker.shutdown();
    }
  });
});
