// Approval: a needsApproval call parks the run as interrupted/approval with
// everything a person needs, and waits. Approve runs it; reject writes the
// decision into the transcript; a decision for another call changes nothing.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approveSignal, decideUpdate, rejectSignal, statusQuery, transcriptQuery } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';

const h = useHarness();
const task = 'Which file mentions a timeout?';

describe('destructive scenario', () => {
  it('parks at turn 2 with call id, tool and args; approve deletes the file for real', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    const parked = await waitForApproval(handle, 'c2');
    expect(parked).toMatchObject({
      status: 'interrupted',
      interruption: { type: 'approval', callId: 'c2', toolName: 'delete_file', args: { path: 'access.log' } },
      turns: 2,
      toolRuns: 1,
    });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
    expect(h.trace(handle.workflowId).find((l) => l.type === 'approval_required')).toMatchObject({
      toolName: 'delete_file',
      callId: 'c2',
      args: { path: 'access.log' },
    });

    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 2, output: 'Deleted access.log to free space.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
    expect(existsSync(join(h.workspaceRoot, ws, 'errors.log'))).toBe(true);
  });

  it('reject with a reason: nothing deleted, the reason is in the transcript, and the answer says so', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    await handle.signal(rejectSignal, { callId: 'c2', reason: 'access.log is needed for the audit', by: 'bob' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 1, output: 'I did not delete anything: you declined the deletion.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
    const declined = (await handle.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 'c2');
    expect(declined?.content).toContain('declined');
    expect(declined?.content).toContain('access.log is needed for the audit');
    expect(declined?.content).toContain('bob');
  });

  it('the empty-rejection experiment reproduces the lie: nothing deleted, yet the agent says it deleted', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws }, h.experiments.set(`empty-rejection-${ws}`, { emptyRejection: true }));
    await waitForApproval(handle, 'c2');
    await handle.signal(rejectSignal, { callId: 'c2' });
    const r = await handle.result();
    expect(r.output).toBe('Deleted access.log to free space.');
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
  });

  it('a decision for another call id changes nothing and is traced', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    await handle.signal(approveSignal, { callId: 'c99', by: 'mallory' });
    await handle.signal(approveSignal, { callId: 'c1', by: 'mallory' });
    await waitFor('two ignored signals in the trace', () =>
      h.trace(handle.workflowId).filter((l) => l.type === 'signal_ignored').length === 2,
    );
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'interrupted', interruption: { callId: 'c2' }, toolRuns: 1 });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
    expect(h.trace(handle.workflowId).filter((l) => l.type === 'signal_ignored').map((l) => l.callId)).toEqual(['c99', 'c1']);
    await handle.signal(rejectSignal, { callId: 'c2' });
    expect((await handle.result()).status).toBe('completed');
  });

  it('the decide update refuses a call id that is not awaiting, and answers with the status when applied', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    const refused = handle.executeUpdate(decideUpdate, { args: [{ callId: 'c7', decision: 'approve', by: 'eve' }] });
    await expect(refused).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    await expect(refused).rejects.toMatchObject({ cause: { message: expect.stringContaining('"c2" is') } });
    const view = await handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'carol' }] });
    expect(view.interruption).toBeNull();
    expect(view.status).toBe('running');
    const r = await handle.result();
    expect(r.output).toBe('Deleted access.log to free space.');
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
  });

  it('an approval timeout ends the run as interrupted/approval, nothing deleted', async () => {
    const ws = freshWorkspace();
    const r = await h.run({ task, model: 'destructive', workspace: ws, approvalTimeoutMs: 500 });
    expect(r).toMatchObject({
      status: 'interrupted',
      interruption: { type: 'approval', callId: 'c2', toolName: 'delete_file', args: { path: 'access.log' } },
      turns: 2,
    });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
  });
});

describe('a provider that sends the same call id every turn', () => {
  it('each call is its own decision and its own effect: the second call_0 is asked about, not taken as decided', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'same_call_id', workspace: ws });
    await waitForApproval(handle, 'call_0');
    await handle.signal(approveSignal, { callId: 'call_0', by: 'alice' });
    // The second reply names its call call_0 again: a new call, parked for its own decision.
    await waitFor('the second call_0 to park', () => h.events(handle.workflowId).filter((l) => l.type === 'approval_required').length === 2);
    expect(await handle.query(statusQuery)).toMatchObject({ interruption: { callId: 'call_0', args: { path: 'notes.txt' } } });
    await handle.signal(rejectSignal, { callId: 'call_0', reason: 'keep the notes', by: 'bob' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 1 });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
    expect(existsSync(join(h.workspaceRoot, ws, 'notes.txt'))).toBe(true);
    const decided = h.events(handle.workflowId).filter((l) => l.type === 'approval_decided');
    expect(decided.map((l) => [l.decision, l.by])).toEqual([['approve', 'alice'], ['reject', 'bob']]);
    expect(h.events(handle.workflowId).some((l) => l.type === 'signal_ignored')).toBe(false);
  });
});
