// `temporal workflow reset` makes another run of the same workflow id that
// replays the earlier run's history up to the reset point. Each run keeps its
// own complete trace: the reset run writes a file of its own (its chain is
// named by its own run id, and carried across continue-as-new), and the run it
// was reset from keeps its file line for line. The CLI's `trace` shows the run
// the server holds as current, whatever the files' timestamps say.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { traceChains, traceFile, type TraceLine } from '../node/trace-format.js';
import { approveSignal, configQuery, transcriptQuery } from '../common/run-messages.js';
import type { RunResult } from '../common/contract.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness();
const exec = promisify(execFile);
const task = 'Which file mentions a timeout?';

/** The real CLI, as an operator runs it. Signals are not re-applied: the reset run is decided afresh. */
async function reset(workflowId: string, runId: string, point: ['--type', 'FirstWorkflowTask' | 'LastWorkflowTask']): Promise<string> {
  const before = (await h.client.workflow.getHandle<typeof agentRun>(workflowId).describe()).runId;
  await exec(findTemporalCli(), ['workflow', 'reset', '-w', workflowId, '-r', runId, ...point, '--reason', 'operator retry', '--reapply-exclude', 'Signal', '--yes', '--address', h.address], { timeout: 30_000 });
  const after = (await h.client.workflow.getHandle<typeof agentRun>(workflowId).describe()).runId;
  expect(after).not.toBe(before);
  return after;
}

/** A chain's workflow lines (activity lines left out): what "complete" is checked on. */
const workflowLines = (id: string, chain: string): TraceLine[] => h.trace(id, chain).filter((l) => l.step === undefined);

/** Waits for the chain's trace to end, then checks it is whole: seq 1..n, one run_started naming the chain, one run_stopped, last. */
async function completeTrace(id: string, chain: string): Promise<TraceLine[]> {
  await waitFor(`the trace of ${chain} to close`, () => workflowLines(id, chain).some((l) => l.type === 'run_stopped'));
  const lines = workflowLines(id, chain);
  expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
  expect(lines.filter((l) => l.type === 'run_started')).toEqual([expect.objectContaining({ seq: 1, chainId: chain })]);
  expect(lines.filter((l) => l.type === 'run_stopped')).toHaveLength(1);
  expect(lines.at(-1)?.type).toBe('run_stopped');
  return lines;
}

async function approvedDelete(id: string, ws: string) {
  const handle = await h.start({ task, model: 'destructive', workspace: ws }, id);
  await waitForApproval(handle, 'c2');
  await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
  expect((await handle.result()).status).toBe('completed');
  return handle;
}

/** Approves c2 in the run the workflow id now points at (the reset run), and waits for its result. */
async function approveCurrent(id: string, runId: string): Promise<RunResult> {
  const handle = h.client.workflow.getHandle<typeof agentRun>(id, runId);
  await waitForApproval(handle, 'c2');
  await handle.signal(approveSignal, { callId: 'c2', by: 'bob' });
  return handle.result();
}

describe('temporal workflow reset', () => {
  // Three runs, two resets and a CLI call: the deadline is a safety net for a loaded machine, not a wait.
  it('to the first workflow task, and again to the last one (after the delete): each run keeps its own whole trace, the earlier ones unchanged', { timeout: 240_000 }, async () => {
    const id = `reset-${freshWorkspace()}`;
    const first = await approvedDelete(id, freshWorkspace());
    const firstChain = first.firstExecutionRunId;
    await completeTrace(id, firstChain);
    const firstFile = traceFile(h.traceDir, id, firstChain);
    const firstText = readFileSync(firstFile, 'utf8');

    // Reset to the first workflow task: the run starts over and proposes the delete again.
    const r1 = await reset(id, firstChain, ['--type', 'FirstWorkflowTask']);
    await approveCurrent(id, r1);
    expect(readFileSync(firstFile, 'utf8')).toBe(firstText);
    const r1Lines = await completeTrace(id, r1);
    expect(r1Lines.filter((l) => l.type === 'approval_decided')).toEqual([expect.objectContaining({ callId: 'c2', by: 'bob' })]);

    // Reset the first run again, to its last workflow task (after the delete): the new run
    // replays the delete's lines into its own file, then runs on from there.
    const r2 = await reset(id, firstChain, ['--type', 'LastWorkflowTask']);
    expect((await h.client.workflow.getHandle<typeof agentRun>(id, r2).result()).status).toBe('completed');
    const r2Lines = await completeTrace(id, r2);
    // Up to the reset point its lines are the first run's events, replayed into its own file
    // (compared by what they record, not by timings, which a replay may compute afresh).
    const original = workflowLines(id, firstChain);
    const shared = r2Lines.findIndex((l) => l.type === 'tool_result' && l.callId === 'c2');
    expect(shared).toBeGreaterThan(0);
    const what = (l: TraceLine) => [l.seq, l.type, l.callId, l.toolName, l.turn, l.decision];
    expect(r2Lines.slice(0, shared + 1).map(what)).toEqual(original.slice(0, shared + 1).map(what));
    expect(readFileSync(firstFile, 'utf8')).toBe(firstText);
    expect(traceChains(h.traceDir, id).sort()).toEqual([firstChain, r1, r2].sort());

    // Our CLI shows the current run (the last reset), even when another run's file
    // claims a later time (a host whose clock runs ahead wrote it).
    const env = { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir };
    const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
    const cliTrace = async (...extra: string[]) =>
      (await exec(bin, ['trace', id, ...extra], { env, timeout: 60_000 })).stdout.trim().split('\n').map((l) => JSON.parse(l) as TraceLine);
    writeFileSync(firstFile, firstText.replace(/"ts":"\d{4}-/g, '"ts":"2999-'));
    expect((await cliTrace()).find((l) => l.type === 'run_started')?.chainId).toBe(r2);
    expect((await cliTrace('--run-id', r1)).find((l) => l.type === 'run_started')?.chainId).toBe(r1);
    expect((await cliTrace('--run-id', firstChain)).find((l) => l.type === 'run_started')?.chainId).toBe(firstChain);
  });

  it('a reset run that continues as new keeps its whole chain in its own file', async () => {
    const handle = await h.start({ task, model: 'plan', continueAsNewAtHistoryBytes: 1024 });
    const id = handle.workflowId;
    await handle.result();
    const firstChain = handle.firstExecutionRunId;
    const firstLines = await completeTrace(id, firstChain);
    expect(firstLines.filter((l) => l.type === 'continued_as_new')).toHaveLength(2);
    const firstText = readFileSync(traceFile(h.traceDir, id, firstChain), 'utf8');

    const r = await reset(id, firstChain, ['--type', 'FirstWorkflowTask']);
    const result = await h.client.workflow.getHandle<typeof agentRun>(id).result();
    expect(result.status).toBe('completed');
    expect(readFileSync(traceFile(h.traceDir, id, firstChain), 'utf8')).toBe(firstText);
    // Its executions after the first were started by continue-as-new from the reset run: same file.
    const lines = await completeTrace(id, r);
    expect(lines.filter((l) => l.type === 'continued_as_new')).toHaveLength(2);
    expect(lines.filter((l) => l.type === 'turn')).toHaveLength(result.turns);
  });

  it('a reset run that stopped at its turn cap can be resumed: the resume carries on from the reset run, not the run it replaced', async () => {
    const handle = await h.start({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: 2, maxBudgetUsd: null } });
    const id = handle.workflowId;
    expect(await handle.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 2 });
    const r = await reset(id, handle.firstExecutionRunId, ['--type', 'FirstWorkflowTask']);
    const resetRun = h.client.workflow.getHandle<typeof agentRun>(id, r);
    expect(await resetRun.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 2 });
    const before = await resetRun.query(transcriptQuery);

    const next = await h.start({ resumeFrom: id, limits: { maxTurns: 4 } } as never);
    expect(await next.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 4, toolRuns: 4 });
    expect((await next.query(transcriptQuery)).slice(0, before.length)).toEqual(before);
    expect(await next.query(configQuery)).toMatchObject({ model: 'runaway', dedupe: 'off', maxTurns: 4, resumeFrom: id });
  });
});
