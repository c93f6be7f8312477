// Attacks on read-ahead (activities/read-ahead.ts, workflows/read-ahead.ts):
// the model activity runs the reply's leading local read-only calls before
// the loop has seen the reply. What must hold whatever the model sends: no
// read runs ahead of a write or a decision it should follow; a read that
// never returns cannot make the model call time out and be bought again; an
// outcome is never recorded for another call (a reused id) nor for a reply
// the loop refuses; a Stop during a read ends the run with the turn paid
// once; and arguments past the limits are not read ahead at all.
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../activities/tools/builtin.js';
import { defineTool } from '../../activities/tools/define-tool.js';
import { Toolset } from '../../activities/tools/toolset.js';
import { READ_AHEAD_MAX_MS, readAheadBudgetMs } from '../../activities/read-ahead.js';
import type { RunResult } from '../../common/contract.js';
import { approveSignal, cancelSignal, transcriptQuery } from '../../common/run-messages.js';
import type { agentRun } from '../../workflows/index.js';
import { freshWorkspace, providerRequests, useHarness, waitFor, waitForApproval } from '../helpers/harness.js';
import type { TraceLine } from '../../node/trace-format.js';

const h = useHarness();

/** A gate a test opens: the stuck tool waits on it, deaf to its signal. */
let openGate: () => void = () => undefined;
let gate = new Promise<void>((resolve) => (openGate = resolve));
let stuckEntries = 0;
const stuckRead = defineTool({
  name: 'stuck_read',
  description: 'Reads something that takes as long as it takes.',
  parameters: { type: 'object', properties: {} },
  readOnly: true,
  activity: { local: true },
  run: async () => {
    stuckEntries += 1;
    await gate;
    return 'read at last';
  },
});

/** Set when the listening read starts: the test's moment to Stop. */
let listeningStarted: () => void = () => undefined;
const listening = new Promise<void>((resolve) => (listeningStarted = resolve));
const listeningRead = defineTool({
  name: 'listening_read',
  description: 'Reads until told to stop.',
  parameters: { type: 'object', properties: {} },
  readOnly: true,
  activity: { local: true },
  run: async (ctx) => {
    listeningStarted();
    await new Promise<void>((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve(), { once: true })));
    throw new Error('stopped');
  },
});

const toolset = new Toolset([...BUILTIN_TOOLS, stuckRead, listeningRead]);

const execs = (t: TraceLine[], callId: string) => t.filter((l) => l.type === 'tool_exec' && l.callId === callId);
const resultLine = (t: TraceLine[], callId: string) => t.find((l) => l.type === 'tool_result' && l.callId === callId && l.step === undefined);
const script = (turns: unknown[]) => `Do it. script:${JSON.stringify(turns)}`;

async function startOn(taskQueue: string, input: { task: string; tools: string[]; workspace?: string }, id: string) {
  return h.client.workflow.start<typeof agentRun>('agentRun', {
    taskQueue,
    workflowId: `${id}-${Date.now()}`,
    args: [{ model: 'script', workspace: input.workspace ?? freshWorkspace(), ...input }],
  });
}

describe('read-ahead under hostile replies', () => {
  it('the time a read may take ahead stays far inside the model call\'s clocks, and is none when they are nearly spent', () => {
    expect(readAheadBudgetMs({ heartbeatTimeoutMs: 10_000, startToCloseTimeoutMs: 120_000 }, 0)).toBe(READ_AHEAD_MAX_MS);
    // A short heartbeat timeout: a tenth of it (the SDK may have sent the last heartbeat 0.8 of it ago).
    expect(readAheadBudgetMs({ heartbeatTimeoutMs: 2_000, startToCloseTimeoutMs: 120_000 }, 0)).toBe(200);
    // A call that took most of its start-to-close: a quarter of what is left.
    expect(readAheadBudgetMs({ heartbeatTimeoutMs: 10_000, startToCloseTimeoutMs: 120_000 }, 119_000)).toBe(250);
    expect(readAheadBudgetMs({ heartbeatTimeoutMs: 10_000, startToCloseTimeoutMs: 120_000 }, 120_500)).toBe(0);
  });

  it('a reply [read, delete, list]: only the read before the write runs ahead; the listing after it runs after the decision, on the folder as the delete left it', async () => {
    const worker = await h.startWorker({ taskQueue: `${h.taskQueue}-order`, toolset });
    try {
      const handle = await startOn(worker.taskQueue, {
        task: script([[{ name: 'read_file', args: { path: 'access.log' } }, { name: 'delete_file', args: { path: 'access.log' } }, { name: 'list_files', args: {} }]]),
        tools: ['read_file', 'delete_file', 'list_files'],
      }, 'ahead-order');
      await waitForApproval(handle, 's0_1');
      const parked = h.trace(handle.workflowId);
      expect(execs(parked, 's0_0')).toMatchObject([{ readAhead: true }]);
      // Neither the write nor the read after it ran: the model call read only up to the first call it may not run.
      expect(execs(parked, 's0_1')).toEqual([]);
      expect(execs(parked, 's0_2')).toEqual([]);
      await handle.signal(approveSignal, { callId: 's0_1', by: 'ops' });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', toolRuns: 3 });
      const t = h.trace(handle.workflowId);
      expect(resultLine(t, 's0_0')).toMatchObject({ ok: true, readAhead: true });
      expect(execs(t, 's0_2').map((l) => l.readAhead ?? false)).toEqual([false]);
      // The listing after the delete saw the delete (read ahead, it would have listed the file still there).
      expect(resultLine(t, 's0_2')).toMatchObject({ ok: true });
      expect(resultLine(t, 's0_2')?.readAhead).toBeUndefined();
      const transcript = await handle.query(transcriptQuery);
      const listing = transcript.find((m) => m.role === 'tool' && m.tool_call_id === 's0_2')?.content ?? '';
      expect(listing).toContain('errors.log');
      expect(listing).not.toContain('access.log');
    } finally {
      await worker.shutdown();
    }
  });

  it('a read that never returns: the model call still completes on its first attempt (the turn is bought once), and the loop runs the read itself', async () => {
    const worker = await h.startWorker({ taskQueue: `${h.taskQueue}-stuck`, toolset });
    try {
      stuckEntries = 0;
      const tag = `stuck-${Date.now()}`;
      const handle = await startOn(worker.taskQueue, { task: `${tag} ${script([[{ name: 'stuck_read', args: {} }], 'Done.'])}`, tools: ['stuck_read'] }, 'ahead-stuck');
      // The loop's own run of the call: it starts only after the model call completed.
      await waitFor('the loop to start the call', () => h.events(handle.workflowId).some((l) => l.type === 'tool_start' && l.callId === 's0_0') && stuckEntries === 2);
      openGate();
      const r: RunResult = await handle.result();
      expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
      const t = h.trace(handle.workflowId);
      // One model attempt per turn: no retry, no second bill.
      expect(t.filter((l) => l.type === 'model_retry')).toEqual([]);
      // One provider request per turn: no retry, no second bill.
      const requests = await providerRequests(h.providerUrl, tag);
      expect(requests.map((q) => q.turn)).toEqual([0, 1]);
      expect(execs(t, 's0_0').map((l) => l.readAhead ?? false)).toEqual([true, false]);
      expect(resultLine(t, 's0_0')).toMatchObject({ ok: true });
      expect(resultLine(t, 's0_0')?.readAhead).toBeUndefined();
    } finally {
      openGate();
      gate = new Promise<void>((resolve) => (openGate = resolve));
      await worker.shutdown();
    }
  });

  it('one call id reused on every turn (call_0): each result is its own call\'s, never the read ahead for the turn before', async () => {
    const worker = await h.startWorker({ taskQueue: `${h.taskQueue}-reused`, toolset });
    try {
      const read = (path: string) => [{ id: 'call_0', name: 'read_file', args: { path } }];
      const handle = await startOn(worker.taskQueue, { task: script([read('errors.log'), read('notes.txt'), read('errors.log')]), tools: ['read_file'] }, 'ahead-reused');
      const r = await handle.result();
      // The third read asks what the first did: the dedupe cache answers it, so it is not a run.
      expect(r).toMatchObject({ status: 'completed', turns: 4, toolRuns: 2 });
      const transcript = await handle.query(transcriptQuery);
      const results = transcript.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
      expect(results).toHaveLength(3);
      expect(results[0]).toBe(results[2]);
      expect(results[1]).not.toBe(results[0]);
      expect(results[0]).toContain('timed out');
      // The first two reads ran once each, ahead; the third was not read at all: the model call was told the cache answers it.
      const t = h.trace(handle.workflowId);
      expect(t.filter((l) => l.type === 'tool_exec').map((l) => l.readAhead)).toEqual([true, true]);
      expect(t.filter((l) => l.type === 'tool_result' && l.step === undefined).map((l) => [l.readAhead, l.cached])).toEqual([[true, undefined], [true, undefined], [undefined, true]]);
    } finally {
      await worker.shutdown();
    }
  });

  it('arguments past the limits (nested 100 deep, 20,000 characters) are not read ahead: the loop refuses them as before', async () => {
    const worker = await h.startWorker({ taskQueue: `${h.taskQueue}-limits`, toolset });
    try {
      let deep: unknown = 'x';
      for (let i = 0; i < 100; i++) deep = { d: deep };
      const handle = await startOn(worker.taskQueue, {
        task: script([[{ name: 'read_file', args: { path: deep } }, { name: 'read_file', args: { path: 'p'.repeat(20_000) } }], 'Done.']),
        tools: ['read_file'],
      }, 'ahead-limits');
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', toolRuns: 0 });
      const t = h.trace(handle.workflowId);
      expect(t.filter((l) => l.type === 'tool_exec')).toEqual([]);
      const transcript = await handle.query(transcriptQuery);
      const results = transcript.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
      expect(results[0]).toContain('nested more than 64 levels deep');
      expect(results[1]).toContain('characters long; the limit is 16384');
    } finally {
      await worker.shutdown();
    }
  });

  it('a Stop while a read runs ahead: the read stops at once, and the run ends interrupted with the turn counted once', async () => {
    const worker = await h.startWorker({ taskQueue: `${h.taskQueue}-stop`, toolset });
    try {
      const handle = await startOn(worker.taskQueue, { task: script([[{ name: 'listening_read', args: {} }], 'Done.']), tools: ['listening_read'] }, 'ahead-stop');
      await listening;
      await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled' }, turns: 1 });
      const t = h.trace(handle.workflowId);
      const turns = t.filter((l) => l.type === 'turn' && l.step === undefined);
      expect(turns).toHaveLength(1);
      expect(r.costUsd).toBeCloseTo(Number(turns[0].turnCostUsd), 12);
      expect(t.filter((l) => l.type === 'model_retry')).toEqual([]);
      expect(execs(t, 's0_0')).toMatchObject([{ readAhead: true }]);
      // The read that was cut short is not in the transcript as a result: the call stays pending for a resume, or says it stopped.
      const transcript = await handle.query(transcriptQuery);
      const result = transcript.find((m) => m.role === 'tool' && m.tool_call_id === 's0_0');
      if (result) expect(result.content).not.toContain('read at last');
    } finally {
      await worker.shutdown();
    }
  });
});
