// Fork from any turn: a new run starts from the first N turns of another run
// (finished, parked, failed, continued as new, reset) or of an export file.
// The inherited turns' tool results come from the source: the fork's history
// schedules no tool and no model activity for them, and its first model call
// is turn N + 1.
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { cancelSignal, configQuery, statusQuery, steerSignal, transcriptQuery } from '../common/run-messages.js';
import { EXIT_CODES, USAGE_ERROR } from '../client/exit-codes.js';
import type { ChatMessage } from '../common/contract.js';
import { cutAtTurn } from '../common/fork.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';
import { cliRunResult } from './helpers/temporal-cli.js';

const h = useHarness();
const exec = promisify(execFile);
const task = 'Which file mentions a timeout?';

async function temporal(...args: string[]): Promise<string> {
  const { stdout } = await exec(findTemporalCli(), [...args, '--address', h.address, '--output', 'json'], { timeout: 30_000 });
  return stdout;
}

/**
 * The activities one execution ran, counted by type: ActivityTaskScheduled
 * events, the markers of local activities (read-only tools run as local
 * activities), and the reads a model call ran ahead (counted as `runTool`,
 * from the run's `tool_result` lines marked `readAhead`). resolveConfig, the
 * local activity every run starts with, is left out.
 */
async function scheduled(handle: WorkflowHandle<typeof agentRun>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const e of (await handle.fetchHistory()).events ?? []) {
    let name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = marker.details?.data?.payloads?.[0]?.data;
      name = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string }).activity_type : 'unknown';
    }
    if (name && name !== 'resolveConfig') counts[name] = (counts[name] ?? 0) + 1;
  }
  const readAhead = h.events(handle.workflowId).filter((l) => l.type === 'tool_result' && l.readAhead === true).length;
  if (readAhead) counts.runTool = (counts.runTool ?? 0) + readAhead;
  return counts;
}

/** The opening and the first n replies with their tool results (each runaway/plan reply has one call). */
const firstTurns = (messages: ChatMessage[], n: number) => messages.slice(0, messages.findIndex((m) => m.role === 'user') + 1 + 2 * n);

/** What the source's trace says its first n turns cost. */
const costOfFirst = (workflowId: string, n: number) =>
  h.events(workflowId).filter((l) => l.type === 'turn' && (l.turn as number) <= n).reduce((a, l) => a + (l.turnCostUsd as number), 0);

const failureOf = async (handle: WorkflowHandle<typeof agentRun>) => {
  const err = await handle.result().then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  return (err as WorkflowFailedError).cause as { type?: string; message: string };
};

describe('fork from any turn', () => {
  it('a finished run forked at turn 2 through the temporal CLI: no tool or model activity for turns 1-2, the same first turns, then another model and a message', async () => {
    const source = await h.start({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: 4, maxBudgetUsd: null } });
    const done = await source.result();
    expect(done).toMatchObject({ status: 'max_turns_exceeded', turns: 4, toolRuns: 4 });
    const sourceMessages = await source.query(transcriptQuery);

    const id = `fork-${freshWorkspace()}`;
    const input = { forkFrom: { run: source.workflowId, atTurn: 2, message: 'Now read errors.log instead.' }, model: 'plan' };
    await temporal('workflow', 'start', '--type', 'agentRun', '--task-queue', h.taskQueue, '--workflow-id', id, '--input', JSON.stringify(input));
    const result = await cliRunResult(h.client, h.address, id);
    // plan answers at its third turn: turn 3, the fork's first model call.
    expect(result).toMatchObject({ status: 'completed', turns: 3, toolRuns: 0, output: 'errors.log mentions a timeout: worker 7 timed out after 30000 ms.' });
    expect(result.forkedFrom).toMatchObject({ run: source.workflowId, workflowId: source.workflowId, runId: source.firstExecutionRunId, atTurn: 2, message: 'Now read errors.log instead.', fromFile: false });
    expect(result.forkedFrom?.inheritedCostUsd).toBeCloseTo(costOfFirst(source.workflowId, 2), 12);
    // The fork's cost is its own turn only.
    expect(result.costUsd).toBeCloseTo(h.events(id).filter((l) => l.type === 'turn').reduce((a, l) => a + (l.turnCostUsd as number), 0), 12);
    expect(result.promptTokensPerTurn).toHaveLength(1);

    const fork = h.client.workflow.getHandle<typeof agentRun>(id);
    // The same count on the source sees its four tool runs and four model calls.
    expect(await scheduled(source)).toEqual({ runTool: 4, callModel: 4 });
    expect(await scheduled(fork)).toEqual({ loadForkSource: 1, callModel: 1 });
    const forkMessages = await fork.query(transcriptQuery);
    expect(forkMessages.slice(0, 5)).toEqual(firstTurns(sourceMessages, 2));
    expect(forkMessages[5]).toEqual({ role: 'user', content: 'Now read errors.log instead.' });
    expect(forkMessages).toHaveLength(7);
    expect(h.events(id)[0]).toMatchObject({ type: 'run_started', model: 'plan', turns: 2, forkedFrom: { run: source.workflowId, atTurn: 2 } });
    const turnLines = h.events(id).filter((l) => l.type === 'turn');
    expect(turnLines.map((l) => l.turn)).toEqual([3]);

    // Lineage: the source's forks are one query away.
    const listed = await waitFor('the fork in visibility', async () => {
      const out = JSON.parse(await temporal('workflow', 'list', '--query', `AgentForkOf="${source.workflowId}"`)) as { execution: { workflowId: string } }[] | null;
      return out?.some((w) => w.execution.workflowId === id) ? out : null;
    });
    expect(listed.map((w) => w.execution.workflowId)).toEqual([id]);
  });

  it('a run parked on an approval: turn 2 is refused (its call has no result), turn 1 forks and asks for its own decision, without the source\'s queued steering message', async () => {
    const ws = freshWorkspace();
    const source = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(source, 'c2');

    const refusedFork = await h.start({ forkFrom: { run: source.workflowId, atTurn: 2 } } as never);
    expect(await failureOf(refusedFork)).toMatchObject({ type: 'ForkRefused', message: expect.stringMatching(/turn 2 is not finished in the source: delete_file call c2 has no result.*fork at turn 1/) });

    // A steering message the source holds for its next turn boundary is the source's: the fork does not get it.
    await source.signal(steerSignal, { message: 'only look in logs/', by: 'alice' });
    await waitFor('the source to queue the message', async () => ((await source.query(statusQuery)).queuedSteers.length === 1 ? true : null));

    const fork = await h.start({ forkFrom: { run: source.workflowId, atTurn: 1 } } as never);
    const parked = await waitForApproval(fork, 'c2');
    expect(parked).toMatchObject({ turns: 2, forkedFrom: { atTurn: 1 }, interruption: { toolName: 'delete_file' }, queuedSteers: [] });
    expect(JSON.stringify(await fork.query(transcriptQuery))).not.toContain('only look in logs/');
    expect(await scheduled(fork)).toEqual({ loadForkSource: 1, callModel: 1 });
    expect((await source.query(statusQuery)).interruption).toMatchObject({ callId: 'c2' });
    await fork.signal(cancelSignal, { reason: 'test done' });
    await source.signal(cancelSignal, { reason: 'test done' });
    expect(await fork.result()).toMatchObject({ status: 'interrupted' });
    await source.result();
  });

  it('a failed run (fatal tool error at turn 1) forks at turn 1 with another policy and model, and completes', async () => {
    const source = await h.start({ task, model: 'recover', toolErrors: 'fatal' });
    expect(await source.result()).toMatchObject({ status: 'failed', turns: 1 });
    const fork = await h.start({ forkFrom: { run: source.workflowId, atTurn: 1 }, model: 'plan', toolErrors: 'describe' } as never);
    const r = await fork.result();
    // plan's turn 2 reads errors.log (a local activity), turn 3 answers.
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 1, forkedFrom: { run: source.workflowId, atTurn: 1 } });
    expect((await fork.query(transcriptQuery)).slice(0, 3)).toEqual((await source.query(transcriptQuery)).slice(0, 3));
    expect(await scheduled(fork)).toEqual({ loadForkSource: 1, callModel: 2, runTool: 1 });
  });

  it('a run that continued as new forks at a turn of an earlier execution: the latest execution\'s transcript holds every turn', async () => {
    const source = await h.start({ task, model: 'runaway', dedupe: 'off', continueAsNewAtHistoryBytes: 1024, limits: { maxTurns: 5, maxBudgetUsd: null } });
    expect(await source.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 5 });
    expect(h.events(source.workflowId).filter((l) => l.type === 'continued_as_new').length).toBeGreaterThanOrEqual(2);
    const latest = (await source.describe()).runId;
    expect(latest).not.toBe(source.firstExecutionRunId);

    const fork = await h.start({ forkFrom: { run: source.workflowId, atTurn: 3 }, model: 'plan', continueAsNewAtHistoryBytes: 10_000_000 } as never);
    const r = await fork.result();
    expect(r).toMatchObject({ status: 'completed', turns: 4, toolRuns: 0, forkedFrom: { runId: latest, atTurn: 3 } });
    expect(r.forkedFrom?.inheritedCostUsd).toBeCloseTo(costOfFirst(source.workflowId, 3), 12);
    expect((await fork.query(transcriptQuery)).slice(0, 7)).toEqual(firstTurns(await source.query(transcriptQuery), 3));
    expect(await scheduled(fork)).toEqual({ loadForkSource: 1, callModel: 1 });

    // A fork that itself continues as new (it inherits the small threshold) keeps its origin and totals, and loads the source once.
    const long = await h.start({ forkFrom: { run: source.workflowId, atTurn: 3 }, limits: { maxTurns: 6 } } as never);
    const lr = await long.result();
    expect(lr).toMatchObject({ status: 'max_turns_exceeded', turns: 6, toolRuns: 3, forkedFrom: { runId: latest, atTurn: 3 } });
    expect(h.events(long.workflowId).filter((l) => l.type === 'continued_as_new').length).toBeGreaterThanOrEqual(1);
    expect((await scheduled(h.client.workflow.getHandle<typeof agentRun>(long.workflowId, long.firstExecutionRunId))).loadForkSource).toBe(1);
    expect((await scheduled(long)).loadForkSource).toBeUndefined();
    expect((await long.query(transcriptQuery)).slice(0, 7)).toEqual(firstTurns(await source.query(transcriptQuery), 3));
  });

  it('a fork of a fork: the inherited cost adds what the first fork inherited to what it paid itself for the turns kept', async () => {
    const source = await h.start({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: 4, maxBudgetUsd: null } });
    await source.result();
    const first = await h.start({ forkFrom: { run: source.workflowId, atTurn: 2 } } as never);
    const a = await first.result();
    expect(a).toMatchObject({ turns: 4, toolRuns: 2 });
    const second = await h.start({ forkFrom: { run: first.workflowId, atTurn: 3 } } as never);
    const b = await second.result();
    expect(b).toMatchObject({ turns: 4, toolRuns: 1, forkedFrom: { run: first.workflowId, atTurn: 3 } });
    const firstsTurn3 = h.events(first.workflowId).find((l) => l.type === 'turn' && l.turn === 3)?.turnCostUsd as number;
    expect(b.forkedFrom?.inheritedCostUsd).toBeCloseTo(costOfFirst(source.workflowId, 2) + firstsTurn3, 12);
    // Turns the first fork inherited are not in its history: a cut inside them has no cost to report, rather than a wrong one.
    const third = await (await h.start({ forkFrom: { run: first.workflowId, atTurn: 1 } } as never)).result();
    expect(third.forkedFrom?.inheritedCostUsd).toBeNull();
  });

  it('a fork stopped at its cap can be resumed: the resume carries on from the fork\'s transcript, with the fork\'s configuration', async () => {
    const source = await h.start({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: 4, maxBudgetUsd: null } });
    await source.result();
    const fork = await h.start({ forkFrom: { run: source.workflowId, atTurn: 2, message: 'Keep listing.' }, limits: { maxTurns: 3 } } as never);
    expect(await fork.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 3 });
    const before = await fork.query(transcriptQuery);
    const resumed = await h.start({ resumeFrom: fork.workflowId, limits: { maxTurns: 5 } } as never);
    expect(await resumed.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 5 });
    const after = await resumed.query(transcriptQuery);
    expect(after.slice(0, before.length)).toEqual(before);
    // The fork's message is in the transcript once, where the fork put it: the resume does not add it again.
    expect(after.filter((m) => m.role === 'user' && m.content?.includes('Keep listing.'))).toHaveLength(1);
    expect(await resumed.query(configQuery)).toMatchObject({ model: 'runaway', dedupe: 'off', maxTurns: 5, resumeFrom: fork.workflowId });
  });

  it('a reset run: the workflow id forks its current execution; runId forks the execution that was reset away', async () => {
    const ws = freshWorkspace();
    const source = await h.start({ task, model: 'plan', workspace: ws });
    await source.result();
    // A file added before the reset, so the reset execution's list_files result differs from the first one's.
    writeFileSync(join(h.workspaceRoot, ws, 'added-before-reset.txt'), 'new\n');
    const { stdout } = await exec(findTemporalCli(), ['workflow', 'reset', '--workflow-id', source.workflowId, '--type', 'FirstWorkflowTask', '--reason', 'test', '--address', h.address, '--output', 'json'], { timeout: 30_000 });
    const resetRunId = (JSON.parse(stdout) as { runId: string }).runId;
    await h.client.workflow.getHandle<typeof agentRun>(source.workflowId, resetRunId).result();
    const listing = async (handle: WorkflowHandle<typeof agentRun>) => (await handle.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 'c1')?.content;

    const current = await h.start({ forkFrom: { run: source.workflowId, atTurn: 1 }, model: 'runaway', limits: { maxTurns: 1 } } as never);
    expect(await current.result()).toMatchObject({ turns: 1, toolRuns: 0, forkedFrom: { runId: resetRunId } });
    expect(await listing(current)).toContain('added-before-reset.txt');
    const old = await h.start({ forkFrom: { run: source.workflowId, runId: source.firstExecutionRunId, atTurn: 1 }, model: 'runaway', limits: { maxTurns: 1 } } as never);
    expect(await old.result()).toMatchObject({ turns: 1, toolRuns: 0, forkedFrom: { runId: source.firstExecutionRunId } });
    expect(await listing(old)).toBe(await listing(h.client.workflow.getHandle<typeof agentRun>(source.workflowId, source.firstExecutionRunId)));
    expect(await listing(old)).not.toContain('added-before-reset.txt');
  });

  it('export, then fork --from-file with another model; the CLI forks a run by id too; a file that is not an export is refused naming why', async () => {
    const env = { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir };
    const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
    const cli = (...args: string[]) => exec(bin, args, { env, timeout: 60_000 }).then((r) => ({ code: 0, ...r }), (e: { code: number; stdout: string; stderr: string }) => e);
    const source = await h.start({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: 3, maxBudgetUsd: null } });
    await source.result();
    const dir = mkdtempSync(join(tmpdir(), 'fork-export-'));
    const file = join(dir, 'run.json');
    expect((await cli('export', source.workflowId, '--out', file)).code).toBe(0);

    const fromFile = `file-fork-${freshWorkspace()}`;
    const res = await cli('fork', '--from-file', file, '--at-turn', '2', '--model', 'plan', '--id', fromFile);
    expect(res.code).toBe(EXIT_CODES.completed);
    expect(res.stdout).toMatch(new RegExp(`started: model=plan .* forked from ${source.workflowId} \\(export file\\) at turn 2 \\(\\$0\\.\\d{6} there\\)`));
    const r = await h.client.workflow.getHandle<typeof agentRun>(fromFile).result();
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 0, forkedFrom: { run: source.workflowId, runId: null, atTurn: 2, fromFile: true } });
    expect(r.forkedFrom?.inheritedCostUsd).toBeCloseTo(costOfFirst(source.workflowId, 2), 12);
    expect((await h.client.workflow.getHandle<typeof agentRun>(fromFile).query(transcriptQuery)).slice(0, 5)).toEqual(firstTurns(await source.query(transcriptQuery), 2));
    expect(await scheduled(h.client.workflow.getHandle<typeof agentRun>(fromFile))).toEqual({ callModel: 1 });

    const byId = `cli-fork-${freshWorkspace()}`;
    const viaRun = await cli('fork', source.workflowId, '--at-turn', '1', '--max-turns', '2', '--id', byId);
    expect(viaRun.code).toBe(EXIT_CODES.max_turns_exceeded);
    expect(await h.client.workflow.getHandle<typeof agentRun>(byId).result()).toMatchObject({ turns: 2, toolRuns: 1, forkedFrom: { atTurn: 1 } });

    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ format: 'something-else', messages: [] }));
    const bad = await cli('fork', '--from-file', join(dir, 'bad.json'), '--at-turn', '1');
    expect(bad.code).toBe(USAGE_ERROR);
    expect(bad.stderr).toMatch(/bad\.json is not a run export: "format" is "something-else", not "agent-harness\/run-export"/);
    const noTurn = await cli('fork', source.workflowId);
    expect(noTurn.stderr).toMatch(/missing --at-turn N/);
  });

  it.each([
    [{ forkFrom: { run: 'x', atTurn: -1 } }, 'InvalidInput', /forkFrom\.atTurn must be an integer >= 0/],
    [{ forkFrom: { run: 'x', atTurn: 1.5 } }, 'InvalidInput', /forkFrom\.atTurn must be an integer >= 0/],
    [{ forkFrom: { run: 'x', atTurn: 1, turn: 2 } }, 'InvalidInput', /forkFrom\.turn is not a known field/],
    [{ forkFrom: { run: 'x', atTurn: 1 }, resumeFrom: 'y' }, 'InvalidInput', /forkFrom and resumeFrom cannot be used together/],
    [{ forkFrom: { atTurn: 1 } }, 'InvalidInput', /forkFrom needs "run"/],
    [{ forkFrom: { run: 'no-such-run-anywhere', atTurn: 1 } }, 'ForkRefused', /cannot fork: there is no run no-such-run-anywhere/],
  ])('bad forkFrom %j fails at once, naming what is wrong', async (input, type, message) => {
    expect(await failureOf(await h.start(input as never))).toMatchObject({ type, message: expect.stringMatching(message) });
  });

  it('a turn past the source\'s end is refused', async () => {
    const source = await h.start({ task, model: 'plan' });
    await source.result();
    const fork = await h.start({ forkFrom: { run: source.workflowId, atTurn: 4 } } as never);
    expect(await failureOf(fork)).toMatchObject({ type: 'ForkRefused', message: expect.stringMatching(/the source has 3 turns, so atTurn 4 is past its end/) });
  });
});

describe('cutting a transcript after turn N', () => {
  const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'read_file', arguments: '{}' } });
  const messages: ChatMessage[] = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
    { role: 'tool', tool_call_id: 'a', name: 'read_file', content: 'A' },
    { role: 'tool', tool_call_id: 'b', name: 'read_file', content: 'B' },
    { role: 'user', content: 'a message steered in after turn 1' },
    { role: 'assistant', content: null, tool_calls: [call('c'), call('d')] },
    { role: 'tool', tool_call_id: 'c', name: 'read_file', content: 'C' },
  ];

  it('keeps the opening and whole turns; a message that came after turn N belongs to turn N + 1', () => {
    expect(cutAtTurn(messages, 0)).toEqual({ ok: true, messages: messages.slice(0, 2), sourceTurns: 2 });
    expect(cutAtTurn(messages, 1)).toEqual({ ok: true, messages: messages.slice(0, 5), sourceTurns: 2 });
  });

  it('refuses a turn with a call that has no result, naming it', () => {
    expect(cutAtTurn(messages, 2)).toMatchObject({ ok: false, reason: expect.stringMatching(/^turn 2 is not finished in the source: read_file call d has no result/) });
    expect(cutAtTurn(messages, 3)).toMatchObject({ ok: false, reason: 'the source has 2 turns, so atTurn 3 is past its end' });
  });
});
