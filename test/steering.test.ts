// Steering, driven as ops would through the real `temporal` CLI and our own:
// a message for a running agent reaches the model at the next turn boundary,
// after every call of the last reply has its result, and is on record in the
// transcript (who, when) and the trace; sent while the run is parked it
// waits, and with `interrupt` it rejects the parked call with the message as
// the reason.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { decideUpdate, statusQuery, steerUpdate, transcriptQuery } from '../common/run-messages.js';
import type { ChatMessage } from '../common/contract.js';
import { freshWorkspace, marker, providerRequests, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { temporalCli, temporalOk } from './helpers/temporal-cli.js';

const h = useHarness();
const exec = promisify(execFile);
const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
const env = () => ({ ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir });
const userMessages = (t: ChatMessage[]) => t.filter((m) => m.role === 'user').map((m) => m.content);
const STEER_TEXT = /^Message from (\S+) \(sent (\S+), while you were working\): (.*)$/s;

describe('a steering message while a tool runs', () => {
  it('temporal workflow update execute --name steer: the model reads it at the next turn, after the result, with who and when', async () => {
    const m = marker();
    const handle = await h.start({ task: `Scan the archive. ${m}`, model: 'slow' });
    const before = Date.now();
    await waitFor('the scan to start', () => h.events(handle.workflowId).some((l) => l.type === 'tool_start'));
    const out = await temporalOk(h.address, 'workflow', 'update', 'execute', '--workflow-id', handle.workflowId, '--name', 'steer',
      '--input', JSON.stringify({ message: 'not that folder, look in logs/', by: 'alice' }));
    // The update answers once the message is queued, with the status showing it.
    expect(JSON.stringify(JSON.parse(out))).toContain('not that folder, look in logs/');

    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
    const t = await handle.query(transcriptQuery);
    expect(t.map((x) => x.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    const [, by, at, text] = STEER_TEXT.exec(String(t[3].content)) ?? [];
    expect({ by, text }).toEqual({ by: 'alice', text: 'not that folder, look in logs/' });
    // Workflow time: when the run took the update.
    expect(Date.parse(at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(at)).toBeLessThanOrEqual(Date.now());

    const events = h.events(handle.workflowId);
    const index = (pred: (l: (typeof events)[number]) => boolean) => events.findIndex(pred);
    expect(events.filter((l) => l.type === 'steered')).toEqual([expect.objectContaining({ by: 'alice', at, turn: 1, message: 'not that folder, look in logs/' })]);
    expect(index((l) => l.type === 'steer_queued')).toBeLessThan(index((l) => l.type === 'tool_result'));
    expect(index((l) => l.type === 'tool_result')).toBeLessThan(index((l) => l.type === 'steered'));
    expect(index((l) => l.type === 'steered')).toBeLessThan(index((l) => l.type === 'turn' && l.turn === 2));
    // The provider checks the protocol like a real API: no request was refused.
    expect((await providerRequests(h.providerUrl, m)).map((q) => q.status)).toEqual([200, 200]);
    expect((await handle.query(statusQuery)).queuedSteers).toEqual([]);
  });

  it('a bad message is refused naming what is wrong: the update at once, the signal traced as ignored', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    const empty = await temporalCli(h.address, 'workflow', 'update', 'execute', '--workflow-id', handle.workflowId, '--name', 'steer', '--input', JSON.stringify({ message: '  ', by: 'alice' }));
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain('message must not be empty');
    await temporalOk(h.address, 'workflow', 'signal', '--workflow-id', handle.workflowId, '--name', 'steer', '--input', JSON.stringify({ by: 'bob' }));
    await waitFor('the bad signal traced', () => h.events(handle.workflowId).find((l) => l.type === 'signal_ignored'));
    expect(h.events(handle.workflowId).find((l) => l.type === 'signal_ignored')).toMatchObject({ signal: 'steer', reason: 'message must be a string, got null' });
    const cli = await exec(bin, ['steer', handle.workflowId, ''], { env: env(), timeout: 60_000 }).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(cli).toMatchObject({ code: 2, stderr: expect.stringContaining('the message is empty') });
    expect((await handle.query(statusQuery)).queuedSteers).toEqual([]);
    await handle.signal('reject', { callId: 'c2' });
    expect((await handle.result()).status).toBe('completed');
    expect(userMessages(await handle.query(transcriptQuery))).toEqual(['Free some space.']);
  });
});

describe('a steering message while the run is parked on an approval', () => {
  it('is queued; a second one with interrupt rejects the parked call with its message as the reason, and the run goes on', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    await temporalOk(h.address, 'workflow', 'signal', '--workflow-id', handle.workflowId, '--name', 'steer', '--input', JSON.stringify({ message: 'check errors.log first', by: 'bob' }));
    const queued = await waitFor('the message queued', async () => {
      const s = await handle.query(statusQuery);
      return s.queuedSteers.length === 1 ? s : null;
    });
    // Queued, not applied: the run still waits for its decision.
    expect(queued).toMatchObject({ agentStatus: 'awaiting_approval', interruption: { callId: 'c2' }, queuedSteers: [{ message: 'check errors.log first', by: 'bob', interrupt: false }] });

    const cli = await exec(bin, ['steer', handle.workflowId, 'keep access.log, the audit needs it', '--by', 'alice', '--interrupt'], { env: env(), timeout: 60_000 });
    expect(cli.stdout).toMatch(/message queued for \S+ \(2 queued\)/);
    // The answer says what the interrupt does: the parked call declined, the run running (issue 34, 5d).
    expect(cli.stdout).toMatch(/it declines the parked delete_file call c2; the model reads it at the next turn boundary; run is running /);
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 1, output: 'I did not delete anything: you declined the deletion.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);

    const t = await handle.query(transcriptQuery);
    const c2 = t.findIndex((x) => x.role === 'tool' && x.tool_call_id === 'c2');
    expect(t[c2].content).toBe('The user declined this delete_file call by alice; it was not run and nothing changed. Reason: keep access.log, the audit needs it');
    // Both messages, in the order sent, right after the call's result and before the next reply.
    expect(t.slice(c2 + 1).map((x) => x.role)).toEqual(['user', 'user', 'assistant']);
    expect(t.slice(c2 + 1, c2 + 3).map((x) => STEER_TEXT.exec(String(x.content))?.filter((_, i) => i === 1 || i === 3))).toEqual([
      ['bob', 'check errors.log first'],
      ['alice', 'keep access.log, the audit needs it'],
    ]);
    const events = h.events(handle.workflowId);
    expect(events.find((l) => l.type === 'approval_decided')).toMatchObject({ callId: 'c2', decision: 'reject', by: 'alice', interrupt: true, reason: 'keep access.log, the audit needs it' });
    expect(events.filter((l) => l.type === 'steered').map((l) => l.by)).toEqual(['bob', 'alice']);
  });
});

describe('the steer update\'s answer with interrupt (issue 34, 5d)', () => {
  it('says the parked call is declined and the run running, not awaiting_approval; with a decision first, still parked', async () => {
    const declined = await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(declined, 'c2');
    const answer = await declined.executeUpdate(steerUpdate, { args: [{ message: 'not that file', by: 'alice', interrupt: true }] });
    expect(answer).toMatchObject({ agentStatus: 'running', interruption: null, declinedByInterrupt: { callId: 'c2', toolName: 'delete_file' } });
    // What holds: the call was declined, by the message.
    expect((await declined.result()).output).toBe('I did not delete anything: you declined the deletion.');
    expect(h.events(declined.workflowId).find((l) => l.type === 'approval_decided')).toMatchObject({ decision: 'reject', interrupt: true, by: 'alice' });

    // Without interrupt: queued only, the run still parked, as it says.
    const plain = await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(plain, 'c2');
    const queued = await plain.executeUpdate(steerUpdate, { args: [{ message: 'read errors.log too', by: 'bob' }] });
    expect(queued).toMatchObject({ agentStatus: 'awaiting_approval', interruption: { callId: 'c2' } });
    expect(queued.declinedByInterrupt).toBeUndefined();
    await plain.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'bob' }] });
    expect((await plain.result()).status).toBe('completed');
  });
});
