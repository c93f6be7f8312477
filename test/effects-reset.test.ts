// `temporal workflow reset` (the real CLI) on a `destructive` run that deleted
// access.log: a reset run of the same workflow never reports the deletion as
// done now. Someone puts a new access.log in the workspace before each reset:
// it must survive, and the tool must say the first run did the deletion.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { FolderEffectStore } from '../activities/effects/folder-store.js';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { approveSignal, statusQuery, transcriptQuery } from '../common/run-messages.js';
import type { ChatMessage, RunResult } from '../common/contract.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const exec = promisify(execFile);
const { EventType } = proto.temporal.api.enums.v1;
const h = useHarness();
const TASK = 'Free some space in the workspace.';

/** A destructive run, approved: access.log deleted by its first run. */
async function deletedRun() {
  const workspace = freshWorkspace();
  const handle = await h.start({ task: TASK, model: 'destructive', workspace });
  await waitForApproval(handle, 'c2');
  await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
  const r = await handle.result();
  expect(r.output).toBe('Deleted access.log to free space.');
  const file = join(h.workspaceRoot, workspace, 'access.log');
  expect(existsSync(file)).toBe(false);
  return { handle, file, firstRunId: handle.firstExecutionRunId };
}

/** `temporal workflow reset …` as an operator types it; the new run's id. */
async function reset(workflowId: string, how: string[]): Promise<string> {
  const { stdout } = await exec(findTemporalCli(), ['workflow', 'reset', '--workflow-id', workflowId, ...how, '--reason', 'operator reset (test)', '--address', h.address, '--output', 'json'], {
    timeout: 30_000,
  });
  const runId = (JSON.parse(stdout) as { runId?: string }).runId;
  if (!runId) throw new Error(`temporal workflow reset printed no run id: ${stdout}`);
  return runId;
}

/** The reset run to its end, approving c2 whenever it parks on it (the approval is asked again when the reset point precedes it). */
async function finish(handle: WorkflowHandle<typeof agentRun>): Promise<RunResult> {
  let done = false;
  const result = handle.result().finally(() => (done = true));
  await waitFor('the reset run to end', async () => {
    if (done) return true;
    const s = await handle.query(statusQuery).catch(() => null);
    if (s?.interruption?.type === 'approval' && s.interruption.callId === 'c2') await handle.signal(approveSignal, { callId: 'c2', by: 'bob' }).catch(() => {});
    return done;
  });
  return result;
}

const toolResult = (messages: ChatMessage[], callId: string) => messages.find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content;

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** The event id of the first event of `type` after `after` that matches. */
async function eventId(handle: WorkflowHandle, type: proto.temporal.api.enums.v1.EventType, after = 0, match: (e: HistoryEvent) => boolean = () => true): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  const e = events.find((x) => Number(x.eventId) > after && x.eventType === type && match(x));
  if (!e) throw new Error(`no event of type ${type} after event ${after}`);
  return Number(e.eventId);
}

const isToolActivity = (e: HistoryEvent) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool';

describe('temporal workflow reset of a run that deleted a file', () => {
  const ledger = () => new FolderEffectStore(join(h.workspaceRoot, '.ledger'));

  it('to the first workflow task: the deletion is asked again, and the tool says run R already did it, not that it deleted now', async () => {
    const { handle, file, firstRunId } = await deletedRun();
    writeFileSync(file, 'a new access.log, written after the first run');
    const newRunId = await reset(handle.workflowId, ['--type', 'FirstWorkflowTask']);
    expect(newRunId).not.toBe(firstRunId);
    const resetRun = h.client.workflow.getHandle<typeof agentRun>(handle.workflowId, newRunId);
    const r = await finish(resetRun);
    expect(r.status).toBe('completed');
    // Nothing deleted again: the new file is there.
    expect(readFileSync(file, 'utf8')).toBe('a new access.log, written after the first run');
    const [record] = (await ledger().oldest(Number.POSITIVE_INFINITY, 10_000)).filter((x) => x.workflowId === handle.workflowId);
    expect(record).toMatchObject({ state: 'done', holder: { runId: firstRunId }, outcome: { ok: true, content: 'deleted access.log' } });
    expect(toolResult(await resetRun.query(transcriptQuery), 'c2')).toBe(
      `already deleted by run ${firstRunId} at ${new Date(record.doneAt ?? 0).toISOString()} (not deleted again): deleted access.log`,
    );
  });

  it('to the workflow task that scheduled the delete (approved before): the delete runs again, and the ledger answers for the first run', async () => {
    const { handle, file, firstRunId } = await deletedRun();
    writeFileSync(file, 'another new access.log');
    // The task that completed with the delete's ActivityTaskScheduled: the approval is before it.
    const scheduled = await eventId(handle, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, 0, isToolActivity);
    // A task's commands follow its WorkflowTaskCompleted: the last one before the scheduling.
    const completedTask = Math.max(
      ...((await handle.fetchHistory()).events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && Number(e.eventId) < scheduled).map((e) => Number(e.eventId)),
    );
    const newRunId = await reset(handle.workflowId, ['--event-id', String(completedTask)]);
    const resetRun = h.client.workflow.getHandle<typeof agentRun>(handle.workflowId, newRunId);
    const r = await finish(resetRun);
    expect(r.status).toBe('completed');
    expect(readFileSync(file, 'utf8')).toBe('another new access.log');
    expect(toolResult(await resetRun.query(transcriptQuery), 'c2')).toMatch(new RegExp(`^already deleted by run ${firstRunId} at \\S+ \\(not deleted again\\): deleted access\\.log$`));
    // The delete activity did run in the reset run (and asked the ledger): its history has a runTool of its own.
    const events = (await resetRun.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED && Number(e.eventId) > completedTask)).not.toHaveLength(0);
  });

  it('to a workflow task after the deletion: the history already holds its result, nothing runs again', async () => {
    const { handle, file, firstRunId } = await deletedRun();
    writeFileSync(file, 'yet another access.log');
    const scheduled = await eventId(handle, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, 0, isToolActivity);
    const completed = await eventId(handle, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, scheduled);
    const after = await eventId(handle, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, completed);
    const newRunId = await reset(handle.workflowId, ['--event-id', String(after)]);
    const resetRun = h.client.workflow.getHandle<typeof agentRun>(handle.workflowId, newRunId);
    const r = await finish(resetRun);
    expect(r).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    expect(readFileSync(file, 'utf8')).toBe('yet another access.log');
    // The deletion's result is the first run's, read from history: true then, and said as it was.
    expect(toolResult(await resetRun.query(transcriptQuery), 'c2')).toBe('deleted access.log');
    const [record] = (await ledger().oldest(Number.POSITIVE_INFINITY, 10_000)).filter((x) => x.workflowId === handle.workflowId);
    expect(record).toMatchObject({ state: 'done', holder: { runId: firstRunId } });
  });
});
