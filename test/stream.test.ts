// The run's live stream (topic `events`) read from another process, as a
// person's laptop would: only the Temporal address and the workflow id. A real
// dev server, the suite's worker (which streams tokens by default) and the
// scripted provider; each subscriber is a child process
// (test/helpers/stream-subscriber.ts) reading through AgentClient's events().
import { describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { addFault, freshWorkspace, marker, providerRequests, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { startProvider } from '../dev/provider/server.js';
import { providerConnections } from '../dev/provider/control.js';
import { approveSignal, cancelSignal } from '../common/run-messages.js';
import type { agentRun } from '../workflows/index.js';
import { isTraceEvent, type RunStreamItem, type StreamTokenEnd, type StreamTokenText, type StreamTraceEvent } from '../common/stream-items.js';
import type { AgentInput } from '../common/contract.js';
import { STREAM_WINDOW_TURNS } from '../workflows/run-stream.js';

const h = useHarness();

type Line = (RunStreamItem & { receivedAt: number }) | { end: true; items: number } | { error: string };

/** A subscriber in a process of its own; resolves with every line it printed once it exits. */
function subscriber(workflowId: string, from = 0, max?: number): { lines: Promise<Line[]>; attached: Promise<Line> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/stream-subscriber.ts', h.address, workflowId, String(from), max === undefined ? '' : String(max)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const received: Line[] = [];
  const listeners: ((l: Line) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (text) => {
    const l = JSON.parse(text) as Line;
    received.push(l);
    for (const f of listeners) f(l);
  });
  const lines = new Promise<Line[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', () => resolve(received));
  });
  // Resolves with the first line: the subscriber is attached and reading.
  const attached = new Promise<Line>((resolve) => listeners.push(resolve));
  return { lines, attached };
}

const items = (lines: Line[]) => lines.filter((l): l is RunStreamItem & { receivedAt: number } => 'offset' in l);
type Received<T> = T & { offset: number; receivedAt: number };
const traced = (lines: Line[]) => items(lines).filter((i): i is Received<StreamTraceEvent> => isTraceEvent(i));
const tokensOf = (lines: Line[]) => items(lines).filter((i): i is StreamTokenText & { offset: number; receivedAt: number } => i.type === 'token');
const endsOf = (lines: Line[]) => items(lines).filter((i): i is StreamTokenEnd & { offset: number; receivedAt: number } => i.type === 'token_end');

/** The workflow's own trace events (no lines written by activities), as the trace file has them. */
function traceEvents(workflowId: string): { seq: number; type: string }[] {
  return h
    .trace(workflowId)
    .filter((l) => l.step === undefined)
    .map((l) => ({ seq: l.seq, type: l.type }));
}

/**
 * A run parked on the approval of its deletion: the stream holds what it did so
 * far, so a subscriber that attaches now misses nothing of a run that would
 * otherwise end before a process starts.
 */
async function parked(workflowId: string, input: Partial<AgentInput> = {}) {
  const handle = await h.start({ task: 'Delete the old logs.', model: 'destructive', workspace: freshWorkspace(), ...input }, workflowId);
  await waitForApproval(handle, 'c2');
  return handle;
}

const approve = (handle: Awaited<ReturnType<typeof parked>>, callId = 'c2') => handle.signal(approveSignal, { callId, by: 'stream-test' });

/** The assistant text of each model turn, in order, from the run's transcript. */
async function replyTexts(workflowId: string): Promise<string[]> {
  const handle = h.client.workflow.getHandle(workflowId);
  const transcript = await handle.query<{ role: string; content?: string | null }[]>('transcript');
  return transcript.filter((m) => m.role === 'assistant').map((m) => m.content ?? '');
}

describe('the live stream, read from another process', () => {
  it('a subscriber from offset 0 sees every trace event in order, ending with run_stopped, and each turn\'s tokens concatenate to its reply', async () => {
    const workflowId = `stream-all-${freshWorkspace()}`;
    const handle = await parked(workflowId);
    const sub = subscriber(workflowId);
    await sub.attached;
    await approve(handle);
    expect((await handle.result()).status).toBe('completed');
    const lines = await sub.lines;
    expect(lines.at(-1)).toMatchObject({ end: true });
    const all = items(lines);
    // Offsets are consecutive from 0: nothing skipped, nothing twice.
    expect(all.map((i) => i.offset)).toEqual(all.map((_, k) => k));
    expect(traced(lines).map((i) => ({ seq: i.seq, type: i.type }))).toEqual(traceEvents(workflowId));
    expect(traced(lines).at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed' });
    // The tokens of each turn's counted attempt are that turn's reply text.
    const replies = await replyTexts(workflowId);
    expect(replies.at(-1)).toBe('Deleted access.log to free space.');
    // An attempt ends on the stream when it said something: the tool-call turns of this run said nothing.
    expect(endsOf(lines).map((e) => [e.turn, e.outcome])).toEqual(replies.flatMap((text, i) => (text ? [[i + 1, 'counted']] : [])));
    for (const [i, text] of replies.entries()) {
      expect(tokensOf(lines).filter((t) => t.turn === i + 1).map((t) => t.text).join(''), `turn ${i + 1}`).toBe(text);
    }
    // A turn's tokens come before the workflow's `turn` event for it.
    const lastTurn = traced(lines).filter((e) => e.type === 'turn').at(-1)!;
    expect(Math.max(...tokensOf(lines).filter((t) => t.turn === replies.length).map((t) => t.offset))).toBeLessThan(lastTurn.offset);
  });

  it('a subscriber that disconnects and reconnects at the next offset sees the rest, each item once', async () => {
    const workflowId = `stream-reconnect-${freshWorkspace()}`;
    const handle = await parked(workflowId);
    const head = items(await subscriber(workflowId, 0, 3).lines);
    expect(head).toHaveLength(3);
    const rest = subscriber(workflowId, head.at(-1)!.offset + 1);
    await rest.attached;
    await approve(handle);
    await handle.result();
    const whole = [...head, ...items(await rest.lines)];
    expect(whole.map((i) => i.offset)).toEqual(whole.map((_, k) => k));
    expect(whole.filter((i): i is Received<StreamTraceEvent> => isTraceEvent(i)).map((i) => ({ seq: i.seq, type: i.type }))).toEqual(traceEvents(workflowId));
  });

  it('follows continue-as-new: one subscriber sees every execution\'s events, seq and offsets continuing', async () => {
    const workflowId = `stream-can-${freshWorkspace()}`;
    const steps = [[{ name: 'list_files' }], [{ name: 'delete_file', args: { path: 'access.log' } }], ...Array.from({ length: 8 }, () => [{ name: 'list_files' }])];
    const handle = await h.start({ task: `Tidy up. script:${JSON.stringify(steps)}`, model: 'script', continueAsNewAtHistoryBytes: 1024, workspace: freshWorkspace() }, workflowId);
    await waitForApproval(handle, 's1_0');
    const sub = subscriber(workflowId);
    await sub.attached;
    await approve(handle, 's1_0');
    expect((await handle.result()).status).toBe('completed');
    const lines = await sub.lines;
    const events = traced(lines);
    expect(events.filter((e) => e.type === 'continued_as_new').length).toBeGreaterThan(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, k) => k + 1));
    expect(events.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(traceEvents(workflowId));
    expect(events.at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed' });
    const all = items(lines);
    expect(all.map((i) => i.offset)).toEqual(all.map((_, k) => k));
  });

  it('a retried model attempt\'s tokens end `failed`, the retry\'s `counted`, and only the counted ones make the reply', async () => {
    const tag = marker();
    const workflowId = `stream-retry-${freshWorkspace()}`;
    // The answer after the approval breaks after two stream parts: that attempt fails and is retried.
    await addFault(h.providerUrl, { match: { taskIncludes: tag, turn: 2, stream: true }, times: 1, fault: { type: 'malformed', afterParts: 2 } });
    const handle = await parked(workflowId, { task: `Delete the old logs. ${tag}` });
    const sub = subscriber(workflowId);
    await sub.attached;
    await approve(handle);
    expect((await handle.result()).status).toBe('completed');
    const lines = await sub.lines;
    const ends = endsOf(lines).filter((e) => e.turn === 3);
    expect(ends.map((e) => [e.attempt, e.outcome])).toEqual([
      [1, 'failed'],
      [2, 'counted'],
    ]);
    // The failed attempt's error is on the stream before its end.
    const error = items(lines).find((i) => i.type === 'model_error');
    expect(error).toMatchObject({ attempt: 1, retryable: true });
    expect(error!.offset).toBeLessThan(endsOf(lines).find((e) => e.outcome === 'failed')!.offset);
    const counted = tokensOf(lines).filter((t) => t.turn === 3 && t.attempt === 2);
    expect(counted.map((t) => t.text).join('')).toBe((await replyTexts(workflowId)).at(-1));
  });

  it('a run that ended before anyone subscribed: a subscriber reads all of it, ending with run_stopped', async () => {
    const workflowId = `stream-late-${freshWorkspace()}`;
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() }, workflowId);
    await handle.result();
    const lines = await subscriber(workflowId).lines;
    expect(lines.at(-1)).toEqual({ end: true, items: items(lines).length });
    // Three turns fit the window: all of it is there.
    expect(traced(lines).map((i) => ({ seq: i.seq, type: i.type }))).toEqual(traceEvents(workflowId));
    expect(tokensOf(lines).filter((t) => t.turn === 3).map((t) => t.text).join('')).toBe((await replyTexts(workflowId)).at(-1));
  });

  it('a long run (more turns than continue-as-new carries): a late subscriber from 0 reads every item, offsets contiguous (it began at the window, offsets jumping)', async () => {
    const workflowId = `stream-window-${freshWorkspace()}`;
    const handle = await h.start({ task: 'Keep listing.', model: 'runaway', limits: { maxTurns: 12 }, continueAsNewAtHistoryBytes: 4096, workspace: freshWorkspace() }, workflowId);
    expect((await handle.result()).status).toBe('max_turns_exceeded');
    const lines = await subscriber(workflowId).lines;
    const all = items(lines);
    expect(all.map((i) => i.offset)).toEqual(all.map((_, k) => k));
    expect(all.filter((i) => i.type === 'gap')).toEqual([]);
    const events = traced(lines);
    expect(events.at(-1)).toMatchObject({ type: 'run_stopped' });
    expect(events.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(traceEvents(workflowId));
    expect(events.filter((e) => e.type === 'turn')).toHaveLength(12);
    // More turns than an execution carries into the next: the first ones were read back from closed executions.
    expect(events.filter((e) => e.type === 'continued_as_new').length).toBeGreaterThan(1);
    expect(12).toBeGreaterThan(STREAM_WINDOW_TURNS);
  });

  it('tool progress is on the stream, between the call\'s start and its result', async () => {
    const workflowId = `stream-progress-${freshWorkspace()}`;
    const handle = await h.start({ task: 'Scan the archive.', model: 'slow', workspace: freshWorkspace() }, workflowId);
    const sub = subscriber(workflowId);
    expect((await handle.result()).status).toBe('completed');
    const all = items(await sub.lines);
    const start = all.find((i) => i.type === 'tool_start')!;
    const result = all.find((i) => i.type === 'tool_result')!;
    const progress = all.filter((i): i is Received<StreamTraceEvent> => i.type === 'tool_progress');
    expect(progress.map((p) => p.label)).toEqual([200, 400, 600, 800, 1000, 1200].map((n) => `scanned ${n} of 1200 files`));
    expect(progress.every((p) => p.offset > start.offset && p.offset < result.offset)).toBe(true);
    expect(progress.every((p) => p.toolName === 'scan_archive' && p.callId === 'c1')).toBe(true);
  });

  it('a Stop in the middle of a streamed reply: the text that arrived ends `stopped`, the provider\'s request is closed, the run ends interrupted', async () => {
    const long = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const slow = await startProvider({ streamChunkDelayMs: 100, scenarios: { chatty: () => ({ type: 'answer', content: long }) } });
    // `chatty` is this provider's own scenario: priced here, or the run's default USD budget would refuse it.
    const worker = await h.startWorker({ taskQueue: `stream-slow-${freshWorkspace()}`, llmBaseUrl: slow.url, modelPrices: { chatty: { inputPerMTokUsd: 2, outputPerMTokUsd: 12 } } });
    try {
      const workflowId = `stream-stop-${freshWorkspace()}`;
      const tag = marker();
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: worker.taskQueue, workflowId, args: [{ task: `Say a lot. ${tag}`, model: 'chatty', workspace: freshWorkspace() }] });
      // The Stop lands while the reply streams: once the provider has written its first text (a subscriber may start later
      // than that on a loaded machine; it reads the closed run's window then).
      await waitFor('the reply to be streaming', async () => ((await providerRequests(slow.url, tag)).some((r) => r.pending && r.firstTextAt !== undefined) ? true : null));
      await handle.signal(cancelSignal, { reason: 'enough' });
      const sub = subscriber(workflowId);
      const result = await handle.result();
      expect(result.status).toBe('interrupted');
      const lines = await sub.lines;
      const said = tokensOf(lines).map((t) => t.text).join('');
      expect(said.length).toBeGreaterThan(0);
      expect(long.startsWith(said) && said.length < long.length).toBe(true);
      // What had arrived is in the result, marked as cut off, priced as the provider may bill it; not in the transcript.
      const partial = result.interruption?.type === 'cancelled' ? result.interruption.partialReply : undefined;
      expect(partial).toMatchObject({ turn: 1, attempt: 1, text: said });
      expect(partial?.usage.completionTokens).toBeGreaterThan(0);
      expect(partial?.estimatedCostUsd).toBeGreaterThan(0);
      expect(result.costUsd).toBe(0);
      expect((await handle.query<{ role: string }[]>('transcript')).map((m) => m.role)).toEqual(['user']);
      expect(endsOf(lines).map((e) => [e.turn, e.attempt, e.outcome])).toEqual([[1, 1, 'stopped']]);
      expect(traced(lines).at(-1)).toMatchObject({ type: 'run_stopped', status: 'interrupted' });
      await waitFor('the provider to see its stream closed', async () => ((await providerConnections(slow.url)).streams === 0 ? true : null));
    } finally {
      await worker.shutdown();
      await slow.close();
    }
  });

  it('an offset past the stream\'s end is refused with one clear error', async () => {
    const workflowId = `stream-past-${freshWorkspace()}`;
    const handle = await parked(workflowId);
    const lines = await subscriber(workflowId, 10_000).lines;
    expect(lines).toEqual([{ error: expect.stringMatching(/^StreamOffsetError: .*offset 10000 is past the end of its stream \(\d+ items so far\)/) }]);
    await handle.signal(cancelSignal, { reason: 'test over' });
    expect((await handle.result()).status).toBe('interrupted');
  });
});

describe('agent-harness follow', () => {
  const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
  /** The CLI on a machine without the worker's disk: its TRACE_DIR is an empty folder of its own. */
  const follow = (args: string[]) => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'no-trace-'));
    return new Promise<{ code: number; stdout: string; stderr: string; traceFiles: string[] }>((resolve) => {
      execFile(bin, ['follow', ...args], { env: { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: elsewhere }, timeout: 120_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr, traceFiles: readdirSync(elsewhere) }),
      );
    });
  };

  it('follows a run from the stream alone: its events, the model\'s text with --tokens, the answer, exit code of its status', async () => {
    const workflowId = `stream-cli-${freshWorkspace()}`;
    const handle = await parked(workflowId);
    const run = follow([workflowId, '--tokens']);
    // Whether the CLI attaches before the run ends or after, it reads every item: the window keeps this short run whole.
    await approve(handle);
    const r = await run;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.traceFiles).toEqual([]);
    const out = r.stdout.split('\n');
    expect(out[0]).toMatch(new RegExp(`^run ${workflowId} started: model=destructive`));
    expect(out).toContain('  → delete_file {"path":"access.log"} (call c2)');
    expect(out.some((l) => l.startsWith('  ⏸ approval required: delete_file'))).toBe(true);
    expect(out.filter((l) => l.startsWith('  ▸ ')).map((l) => l.slice(4)).join('')).toContain('Deleted access.log to free space.');
    expect(out.some((l) => /^turn 3: /.test(l))).toBe(true);
    expect(out).toContain('answer: Deleted access.log to free space.');
  });

  it('--from past the stream\'s end is a usage error naming the end', async () => {
    const workflowId = `stream-cli-past-${freshWorkspace()}`;
    const handle = await parked(workflowId);
    const r = await follow([workflowId, '--from', '9999']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^agent-harness follow: .*offset 9999 is past the end of its stream \(\d+ items so far\)/);
    const bad = await follow([workflowId, '--from', '-1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--from must be a stream offset/);
    await handle.signal(cancelSignal, { reason: 'test over' });
    await handle.result();
  });
});

