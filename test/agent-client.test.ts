// AgentClient as a team's code drives it: a real dev server, a real worker
// and the real scripted provider, every run started, decided, steered and
// stopped through the client's typed methods (no casts at the call sites).
// Every run it starts is replayed when the file ends (the harness client records each start).
import { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  AgentClient,
  AgentRunHandle,
  CannotResumeError,
  InvalidInputError,
  NoWorkerError,
  RunAlreadyFinishedError,
  RunNotFoundError,
  UpdateRefusedError,
  type AgentInput,
  type AgentRunWorkflow,
  type RunResult,
  type RunStatusView,
} from '../client/index.js';
import type { agentRun } from '../workflows/index.js';
import { freshWorkspace, marker, useHarness, waitFor } from './helpers/harness.js';

const h = useHarness();
let agent: AgentClient;

beforeAll(() => {
  agent = new AgentClient({ client: h.client, taskQueue: h.taskQueue });
});

/** Starts a run through the client (its client is the harness's, which records the start for the file's replay check). */
async function start(input: AgentInput, workflowId = `ac-${input.model ?? 'plan'}-${randomUUID().slice(0, 8)}`): Promise<AgentRunHandle> {
  return agent.start(input, { workflowId });
}

/** The status once the run is parked on an approval of `callId` (an event: the status query says so). */
const parkedOn = (handle: AgentRunHandle, callId: string): Promise<RunStatusView> =>
  waitFor(`${handle.workflowId} to park on ${callId}`, async () => {
    const s = await handle.status();
    return s.interruption?.type === 'approval' && s.interruption.callId === callId ? s : null;
  });

/** The error a promise rejects with (the test fails if it resolves). */
async function refusal(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(v)}`);
    },
    (err: unknown) => err,
  );
}

describe('AgentClient', () => {
  it('types handles and results as the workflow does', () => {
    // The client's view of the workflow is the workflow's own signature (its carried state aside).
    expectTypeOf<Parameters<AgentRunWorkflow>[0]>().toEqualTypeOf<Parameters<typeof agentRun>[0]>();
    expectTypeOf<ReturnType<AgentRunWorkflow>>().toEqualTypeOf<ReturnType<typeof agentRun>>();
    expectTypeOf<AgentRunHandle['result']>().returns.resolves.toEqualTypeOf<RunResult>();
  });

  it('starts a plan run and returns its typed result', async () => {
    const handle = await start({ task: `Which file mentions a timeout? ${marker()}`, model: 'plan' });
    const r = await handle.result();
    expect(r).toMatchObject({ workflowId: handle.workflowId, status: 'completed', turns: 3, toolRuns: 2, interruption: null });
    expect(r.output).toContain('errors.log mentions a timeout');
    expect((await handle.transcript()).filter((m) => m.role === 'assistant')).toHaveLength(3);
    expect((await handle.status()).agentStatus).toBe('completed');
    expect(await handle.config()).toMatchObject({ model: 'plan' });
  });

  it('approve answers with the run\'s status once the run has taken it; the deletion happens', async () => {
    const ws = freshWorkspace();
    const handle = await start({ task: 'Free some space.', model: 'destructive', workspace: ws });
    const parked = await parkedOn(handle, 'c2');
    expect(parked.interruption).toMatchObject({ type: 'approval', toolName: 'delete_file', args: { path: 'access.log' } });
    const argsHash = parked.interruption?.type === 'approval' ? parked.interruption.argsHash : undefined;
    const view = await handle.approve('c2', { by: 'alice', ...(argsHash !== undefined ? { argsHash } : {}) });
    // The update answers after the decision is taken: the run no longer waits on c2.
    expect(view.interruption).toBeNull();
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
    expect(h.events(handle.workflowId).find((l) => l.type === 'approval_decided')).toMatchObject({ decision: 'approve', by: 'alice' });
    // Too late: the run has ended, and the server says so at once.
    const late = await refusal(handle.approve('c2', { by: 'alice' }));
    expect(late).toBeInstanceOf(RunAlreadyFinishedError);
  });

  it('reject writes the reason into the transcript; the call does not run', async () => {
    const ws = freshWorkspace();
    const handle = await start({ task: 'Tidy up.', model: 'destructive', workspace: ws });
    await parkedOn(handle, 'c2');
    await handle.reject('c2', { by: 'ops', reason: 'keep the logs' });
    const r = await handle.result();
    expect(r.output).toBe('I did not delete anything: you declined the deletion.');
    expect((await handle.transcript()).some((m) => m.role === 'tool' && m.content.includes('keep the logs'))).toBe(true);
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
  });

  it('a decision for a call that is not pending is refused with the run\'s reason, not a timeout; the run still waits', async () => {
    const ws = freshWorkspace();
    const handle = await start({ task: 'Free some space.', model: 'destructive', workspace: ws });
    await parkedOn(handle, 'c2');
    const wrong = await refusal(handle.approve('c9', { by: 'alice' }));
    expect(wrong).toBeInstanceOf(UpdateRefusedError);
    expect(wrong).toMatchObject({ update: 'decide', type: 'UpdateRefused', reason: 'call "c9" is not awaiting a decision; "c2" is', workflowId: handle.workflowId });
    const badHash = await refusal(handle.approve('c2', { by: 'alice', argsHash: '0'.repeat(64) }));
    expect(badHash).toBeInstanceOf(UpdateRefusedError);
    expect((await handle.status()).interruption).toMatchObject({ type: 'approval', callId: 'c2' });
    await handle.reject('c2', { by: 'alice' });
    expect((await handle.result()).status).toBe('completed');
  });

  it('steer queues a message the model reads at the next turn', async () => {
    const handle = await start({ task: `Scan the archive. ${marker()}`, model: 'slow' });
    await waitFor('the scan to start', () => h.events(handle.workflowId).some((l) => l.type === 'tool_start'));
    const view = await handle.steer('not that folder, look in logs/', { by: 'alice' });
    expect(view.queuedSteers).toEqual([expect.objectContaining({ message: 'not that folder, look in logs/', by: 'alice', interrupt: false })]);
    expect(await handle.result()).toMatchObject({ status: 'completed', turns: 2 });
    const users = (await handle.transcript()).filter((m) => m.role === 'user').map((m) => m.content);
    expect(users.at(-1)).toMatch(/^Message from alice .*: not that folder, look in logs\/$/s);
    expect(await refusal(handle.steer('again', { by: 'alice' }))).toBeInstanceOf(RunAlreadyFinishedError);
  });

  it('cancel ends a parked run interrupted, with the reason', async () => {
    const handle = await start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await parkedOn(handle, 'c2');
    await handle.cancel('user pressed Stop');
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' } });
  });

  it('listAwaiting shows a parked run with the call it waits on', async () => {
    const handle = await start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await parkedOn(handle, 'c2');
    // Visibility is updated asynchronously: wait for the row, not for time.
    const row = await waitFor('the parked run in listAwaiting', async () => (await agent.listAwaiting()).find((w) => w.workflowId === handle.workflowId));
    expect(row).toMatchObject({ temporalStatus: 'RUNNING', agentStatus: 'awaiting_approval', turns: 2, awaiting: { toolName: 'delete_file', callId: 'c2' }, taskQueue: h.taskQueue });
    expect(row.awaiting?.argsHash).toMatch(/^[0-9a-f]{64}$/);
    await handle.reject('c2', { by: 'alice' });
    await handle.result();
    await waitFor('the run to leave listAwaiting', async () => !(await agent.listAwaiting()).some((w) => w.workflowId === handle.workflowId));
  });

  it('getHandle is synchronous and lazy: taken before the run exists, its first use is RunNotFoundError, and the same handle drives the run once it starts', async () => {
    const id = `ac-later-${randomUUID().slice(0, 8)}`;
    // As client.workflow.getHandle: no server call, no throw, no promise (a child agent's handle before its parent starts it).
    const handle = agent.getHandle(id);
    expect(handle).toBeInstanceOf(AgentRunHandle);
    expect(handle.workflowId).toBe(id);
    const missing = await refusal(handle.status());
    expect(missing).toBeInstanceOf(RunNotFoundError);
    expect(missing).toMatchObject({ workflowId: id, message: `no such run: ${id}` });
    expect(await refusal(handle.result())).toBeInstanceOf(RunNotFoundError);
    await start({ task: 'Which file mentions a timeout?', model: 'plan' }, id);
    // The refusal was not kept: the handle taken before the start follows the run.
    expect((await handle.result()).status).toBe('completed');
  });

  it('a lazy handle on a workflow that is not an agentRun refuses on first use, naming its type', async () => {
    const id = `ac-other-${randomUUID().slice(0, 8)}`;
    // Through a client of its own: the harness's would replay it at the end, and no worker has this type.
    const raw = new Client({ connection: h.client.connection });
    await raw.workflow.start('noSuchWorkflowType', { taskQueue: `nobody-${randomUUID().slice(0, 8)}`, workflowId: id });
    const handle = agent.getHandle(id);
    const wrong = await refusal(handle.cancel('x'));
    expect(wrong).toBeInstanceOf(RunNotFoundError);
    expect((wrong as RunNotFoundError).message).toContain('it is a noSuchWorkflowType workflow, not an agentRun');
    await raw.workflow.getHandle(id).terminate('test done');
  });

  it('refuses bad input before any run starts, naming the field', async () => {
    const workflowId = `ac-bad-${randomUUID().slice(0, 8)}`;
    const bad = await refusal(agent.start({ task: 'x', limits: { maxTurns: -3 } }, { workflowId }));
    expect(bad).toBeInstanceOf(InvalidInputError);
    expect(bad).toMatchObject({ field: 'limits.maxTurns', message: 'limits.maxTurns must be a positive integer or null, got -3' });
    expect(await refusal(agent.getHandle(workflowId).describe())).toBeInstanceOf(RunNotFoundError);
  });

  it('resume needs a higher cap and then carries on; fork starts from a turn of its source', async () => {
    const capped = await start({ task: 'List the files.', model: 'runaway', limits: { maxTurns: 2 } });
    expect(await capped.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 2 });
    const same = await refusal(agent.resume(capped.workflowId));
    expect(same).toBeInstanceOf(InvalidInputError);
    expect((same as InvalidInputError).message).toBe(`run ${capped.workflowId} stopped at its turn cap after 2 turns: give a higher cap, e.g. limits.maxTurns: 4 (or null)`);
    const resumed = await agent.resume(capped.workflowId, { limits: { maxTurns: 4 } });
    expect(await resumed.result()).toMatchObject({ status: 'max_turns_exceeded', turns: 4 });

    const done = await start({ task: 'Which file mentions a timeout?', model: 'plan' });
    await done.result();
    expect(await refusal(agent.resume(done.workflowId))).toBeInstanceOf(CannotResumeError);
    const past = await refusal(agent.fork(done.workflowId, { atTurn: 9 }));
    expect((past as InvalidInputError).message).toBe('atTurn 9: the source has 3 turns, so atTurn 9 is past its end');
    const fork = await agent.fork(done.workflowId, { atTurn: 1 });
    expect(fork.workflowId).toMatch(new RegExp(`^${done.workflowId}-fork-`));
    const r = await fork.result();
    expect(r).toMatchObject({ status: 'completed', forkedFrom: { run: done.workflowId, atTurn: 1 } });
    // From an export, as from the run: the same turns.
    const fromExport = await agent.fork(await done.export(), { atTurn: 1 });
    expect((await fromExport.result()).output).toBe(r.output);
  });

  it('with no worker on the run\'s queue, a query or a decision is not sent (NoWorkerError); a signal is recorded, and never decides a call blind', async () => {
    const queue = `nobody-${randomUUID().slice(0, 8)}`;
    const ws = freshWorkspace();
    const handle = await agent.start({ task: 'Free some space.', model: 'destructive', workspace: ws }, { workflowId: `ac-nw-${randomUUID().slice(0, 8)}`, taskQueue: queue });
    expect((await handle.workers()).polling).toBe(false);
    const status = await refusal(handle.status());
    expect(status).toBeInstanceOf(NoWorkerError);
    expect((status as NoWorkerError).message).toBe(`no worker polls task queue ${queue} (none seen in the last 5 minutes), so the status query was not sent to ${handle.workflowId}; start a worker on ${queue} and try again`);
    expect(await refusal(handle.approve('c2', { by: 'alice' }))).toMatchObject({ what: 'decide', workers: { taskQueue: queue, polling: false } });
    // The signal is recorded in the run's history, worker or not.
    await handle.signals.approve('c2', { by: 'bob' });
    const history = await handle.workflow.fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'approve')).toBe(true);
    expect(await handle.describe()).toMatchObject({ workflowId: handle.workflowId, temporalStatus: 'RUNNING', taskQueue: queue, searchAttributes: { AgentStatus: 'running' } });

    // A worker comes: the approval arrived before c2 was proposed, so it decides nothing; a person still must.
    const worker = await h.startWorker({ taskQueue: queue });
    try {
      await waitFor('the worker to poll the queue', async () => (await handle.workers()).polling);
      await parkedOn(handle, 'c2');
      await waitFor('the early approval traced as ignored', () => h.events(handle.workflowId).find((l) => l.type === 'signal_ignored' && l.signal === 'approve'));
      await handle.approve('c2', { by: 'alice' });
      expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    } finally {
      await worker.shutdown();
    }
  });
});
