// Approvals bound to what was approved: a parked call shows its argsHash
// (SHA-256 of its arguments' canonical JSON) in the status, the details panel
// and the AgentPendingArgsHash search attribute; a decision that names
// another hash is refused (update) or ignored and traced (signal); an ops
// setting requires the hash for chosen tools; a resumed run never inherits a
// decision.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { approveSignal, configQuery, decideUpdate, statusQuery, transcriptQuery } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { temporalCli } from './helpers/temporal-cli.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness();
const exec = promisify(execFile);
const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
const env = () => ({ ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir });
/** What anyone computes by hand: printf '%s' '{"path":"access.log"}' | sha256sum */
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const ACCESS_LOG = sha256('{"path":"access.log"}');
const ERRORS_LOG = sha256('{"path":"errors.log"}');

async function searchAttribute(workflowId: string, name: string): Promise<unknown> {
  const d = await h.client.workflow.getHandle<typeof agentRun>(workflowId).describe();
  return d.searchAttributes[name]?.[0];
}

describe('argsHash of a parked call', () => {
  it('is shown beside its arguments; a decision naming other arguments is refused, the matching one approves', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: ws });
    const parked = await waitForApproval(handle, 'c2');
    // callKey: the call's occurrence in this run chain, what a signed decision binds beside argsHash.
    expect(parked.interruption).toEqual({ type: 'approval', callId: 'c2', toolName: 'delete_file', args: { path: 'access.log' }, argsHash: ACCESS_LOG, callKey: `${handle.workflowId}@${handle.firstExecutionRunId}/call2` });
    expect(await searchAttribute(handle.workflowId, 'AgentPendingArgsHash')).toBe(ACCESS_LOG);
    const meta = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(meta.currentDetails).toContain(`delete_file {"path":"access.log"}\` (call c2) · **argsHash:** \`${ACCESS_LOG}\``);
    expect(h.events(handle.workflowId).find((l) => l.type === 'approval_required')).toMatchObject({ callId: 'c2', argsHash: ACCESS_LOG });

    // The update (temporal CLI): refused at once, naming both hashes.
    const wrong = await temporalCli(h.address, 'workflow', 'update', 'execute', '--workflow-id', handle.workflowId, '--name', 'decide',
      '--input', JSON.stringify({ callId: 'c2', decision: 'approve', by: 'alice', argsHash: ERRORS_LOG }));
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain(`argsHash mismatch: the decision names arguments hashing to ${ERRORS_LOG}, but call "c2" (delete_file) has arguments hashing to ${ACCESS_LOG}`);
    // The signal: ignored, and on record.
    await handle.signal(approveSignal, { callId: 'c2', by: 'mallory', argsHash: ERRORS_LOG });
    await waitFor('the mismatched signal traced', () => h.events(handle.workflowId).find((l) => l.type === 'signal_ignored'));
    expect(h.events(handle.workflowId).find((l) => l.type === 'signal_ignored')).toMatchObject({ signal: 'approve', callId: 'c2', reason: expect.stringMatching(/^argsHash mismatch/) });
    expect(await handle.query(statusQuery)).toMatchObject({ agentStatus: 'awaiting_approval', toolRuns: 1 });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);

    // Our CLI: a malformed hash is a usage error before anything is sent; the right one approves.
    const typo = await exec(bin, ['approve', handle.workflowId, 'c2', '--args-hash', 'abc'], { env: env(), timeout: 60_000 }).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(typo).toMatchObject({ code: 2, stderr: expect.stringContaining('--args-hash must be 64 hex digits') });
    const ok = await exec(bin, ['approve', handle.workflowId, 'c2', '--by', 'carol', '--args-hash', ACCESS_LOG.toUpperCase()], { env: env(), timeout: 60_000 });
    expect(ok.stdout).toContain('approved c2');
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
    expect(h.events(handle.workflowId).find((l) => l.type === 'approval_decided')).toMatchObject({ by: 'carol', decision: 'approve', argsHash: ACCESS_LOG });
    expect(await searchAttribute(handle.workflowId, 'AgentPendingArgsHash')).toBeUndefined();
  });

  it('an approval timeout ends the run with the hash in its interruption', async () => {
    const r = await h.run({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace(), approvalTimeoutMs: 500 });
    expect(r.interruption).toEqual({ type: 'approval', callId: 'c2', toolName: 'delete_file', args: { path: 'access.log' }, argsHash: ACCESS_LOG });
  });
});

describe('the ops setting requireArgsHash (AGENT_REQUIRE_ARGS_HASH)', () => {
  it('approving a tool it names needs the hash, and the setting is recorded in the run config', async () => {
    const worker = await h.startWorker({ taskQueue: `${h.taskQueue}-require`, runDefaults: { requireArgsHash: ['delete_file'] } });
    try {
      const ws = freshWorkspace();
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: worker.taskQueue, workflowId: `require-${ws}`, args: [{ task: 'Free some space.', model: 'destructive', workspace: ws }] });
      await waitForApproval(handle, 'c2');
      expect(await handle.query(configQuery)).toMatchObject({ requireArgsHash: ['delete_file'] });
      expect(h.events(handle.workflowId).find((l) => l.type === 'approval_required')).toMatchObject({ argsHashRequired: true });
      const bare = handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'alice' }] });
      await expect(bare).rejects.toMatchObject({ cause: { message: expect.stringMatching(/^argsHash required: approving delete_file needs the call's argsHash/) } });
      const view = await handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'alice', argsHash: ACCESS_LOG }] });
      expect(view.interruption).toBeNull();
      expect((await handle.result()).output).toBe('Deleted access.log to free space.');
    } finally {
      await worker.shutdown();
    }
  });

  it('a worker whose setting names a tool it does not offer does not start', async () => {
    await expect(h.startWorker({ taskQueue: `${h.taskQueue}-bad-require`, runDefaults: { requireArgsHash: ['delete_fiel'] } })).rejects.toThrow(
      /AGENT_REQUIRE_ARGS_HASH names "delete_fiel", which this worker does not offer/,
    );
  });
});

describe('a decision is used once', () => {
  it('a resumed run asks again about the call its source stopped on, though the source approved an earlier call with the same id', async () => {
    const ws = freshWorkspace();
    // same_call_id names both deletions call_0: access.log, then notes.txt.
    const source = await h.start({ task: 'Tidy up.', model: 'same_call_id', workspace: ws, approvalTimeoutMs: 3000 });
    await waitForApproval(source, 'call_0');
    await source.signal(approveSignal, { callId: 'call_0', by: 'alice', argsHash: ACCESS_LOG });
    const stopped = await source.result();
    expect(stopped).toMatchObject({ status: 'interrupted', interruption: { callId: 'call_0', args: { path: 'notes.txt' } } });

    const resumed = await h.start({ task: 'ignored', resumeFrom: source.workflowId, approvalTimeoutMs: null });
    const parked = await waitForApproval(resumed, 'call_0');
    expect(parked.interruption).toMatchObject({ args: { path: 'notes.txt' }, argsHash: sha256('{"path":"notes.txt"}') });
    expect(h.events(resumed.workflowId).some((l) => l.type === 'approval_decided')).toBe(false);
    expect(existsSync(join(h.workspaceRoot, ws, 'notes.txt'))).toBe(true);
    // The source's approval does not apply here either: it named access.log's arguments.
    await resumed.signal(approveSignal, { callId: 'call_0', by: 'alice', argsHash: ACCESS_LOG });
    await waitFor('the stale approval traced', () => h.events(resumed.workflowId).find((l) => l.type === 'signal_ignored'));
    await resumed.signal('reject', { callId: 'call_0', reason: 'keep the notes', by: 'bob' });
    const r = await resumed.result();
    expect(r.status).toBe('completed');
    expect(existsSync(join(h.workspaceRoot, ws, 'notes.txt'))).toBe(true);
    const declined = (await resumed.query(transcriptQuery)).filter((m) => m.role === 'tool' && m.content.includes('keep the notes'));
    expect(declined).toHaveLength(1);
  });
});
