// A deployment brings its own tools as one module (examples/tools/notes.ts),
// chosen at worker start with AGENT_TOOLS_MODULES: a real worker process
// offers them, runs select them by name, and the harness's approvals (a rule
// on the arguments), budget and cancellation apply to them like to built-ins.
import { WorkflowFailedError } from '@temporalio/client';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../node/project-root.js';
import { approveSignal, cancelSignal, rejectSignal } from '../common/run-messages.js';
import type { AgentInput } from '../common/contract.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
let worker: WorkerProcess;

beforeAll(async () => {
  worker = await startWorkerProcess({
    taskQueue: h.taskQueue,
    traceDir: h.traceDir,
    workspaceRoot: h.workspaceRoot,
    env: { AGENT_TOOLS_MODULES: join(PROJECT_ROOT, 'examples/tools/notes.ts') },
  });
});
afterAll(async () => {
  await worker?.kill();
});

const TOOLS = ['write_note', 'count_words', 'read_file'];
/** A `script` run: the scripted model makes these calls, one turn per inner list. */
const scripted = (turns: { name: string; args?: Record<string, unknown> }[][], extra: Partial<AgentInput> = {}): AgentInput => ({
  task: `Take notes. script: ${JSON.stringify(turns)}`,
  model: 'script',
  tools: TOOLS,
  workspace: freshWorkspace(),
  ...extra,
});
const file = (ws: string | undefined, rel: string) => join(h.workspaceRoot, ws ?? '', rel);

describe('a tool module chosen at worker start', () => {
  it('runs with its approval rule: tmp/ goes through, elsewhere waits for a person, tmp/../ counts as elsewhere', async () => {
    const input = scripted([
      [{ name: 'write_note', args: { path: 'tmp/a.txt', text: 'scratch' } }],
      [{ name: 'write_note', args: { path: 'notes/b.txt', text: 'keep these four words' } }],
      [{ name: 'write_note', args: { path: 'tmp/../c.txt', text: 'sneaky' } }],
      [{ name: 'count_words', args: { path: 'notes/b.txt' } }],
    ]);
    const handle = await h.start(input);
    const first = await waitForApproval(handle, 's1_0');
    expect(first.interruption).toMatchObject({ toolName: 'write_note', args: { path: 'notes/b.txt' } });
    // The note under tmp/ was written without anyone being asked.
    expect(readFileSync(file(input.workspace, 'tmp/a.txt'), 'utf8')).toBe('scratch');
    await handle.signal(approveSignal, { callId: 's1_0', by: 'alice' });
    await waitForApproval(handle, 's2_0');
    await handle.signal(rejectSignal, { callId: 's2_0', by: 'bob', reason: 'outside tmp' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 5, toolRuns: 3 });
    expect(readFileSync(file(input.workspace, 'notes/b.txt'), 'utf8')).toBe('keep these four words');
    expect(existsSync(file(input.workspace, 'c.txt'))).toBe(false);
    expect(r.output).toContain('notes/b.txt: 4 words');
    const asked = h.events(handle.workflowId).filter((l) => l.type === 'approval_required').map((l) => l.callId);
    expect(asked).toEqual(['s1_0', 's2_0']);
  });

  it('a spent budget stops the run before another turn: the first turn\'s write ran, the second never was asked for', async () => {
    const input = scripted(
      [[{ name: 'write_note', args: { path: 'tmp/one.txt', text: 'x' } }], [{ name: 'write_note', args: { path: 'tmp/two.txt', text: 'y' } }]],
      { limits: { maxTurns: null, maxBudgetUsd: 0.00001 } },
    );
    const r = await h.run(input);
    // The budget is checked before each model call: the calls of the turn that spent it still run (the chapter's rule).
    expect(r).toMatchObject({ status: 'budget_exceeded', turns: 1, toolRuns: 1 });
    expect(existsSync(file(input.workspace, 'tmp/one.txt'))).toBe(true);
    expect(existsSync(file(input.workspace, 'tmp/two.txt'))).toBe(false);
  });

  it('a Stop while its write waits for approval ends the run as cancelled, nothing written', async () => {
    const input = scripted([[{ name: 'write_note', args: { path: 'notes/stop.txt', text: 'x' } }]]);
    const handle = await h.start(input);
    await waitForApproval(handle, 's0_0');
    await handle.signal(cancelSignal, { reason: 'changed my mind' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'changed my mind' } });
    expect(existsSync(file(input.workspace, 'notes/stop.txt'))).toBe(false);
  });

  it('a run naming a tool the worker does not offer fails at once, naming what it offers', async () => {
    const handle = await h.start({ task: 't', model: 'plan', tools: ['write_note', 'launch_rockets'] });
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause?.message).toMatch(/tools names an unknown tool "launch_rockets"; this worker offers .*write_note.*count_words/);
  });

  it('the model is offered exactly the tools the run selected, the module\'s among them', async () => {
    const handle = await h.start(scripted([], { debug: true }));
    await handle.result();
    const request = await waitFor('the model_request trace line', () => h.trace(handle.workflowId).find((l) => l.type === 'model_request'));
    expect(request.tools).toEqual(TOOLS);
  });

  it('a run keeps the specs it started with: a worker without the module still drives it, and its call fails as ToolNotOffered, not silently', async () => {
    const queue = `own-tools-${Date.now()}`;
    const common = { taskQueue: queue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot };
    const withModule = await startWorkerProcess({ ...common, env: { AGENT_TOOLS_MODULES: join(PROJECT_ROOT, 'examples/tools/notes.ts') } });
    // A short outage allowance: without one the call would wait hours (waiting_for_tool) for a worker that offers it.
    const input = scripted([[{ name: 'write_note', args: { path: 'notes/late.txt', text: 'x' } }]], { toolOutageMs: 1000 });
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: `own-tools-deploy-${Date.now()}`, args: [input] });
    await waitForApproval(handle, 's0_0');
    await withModule.kill();
    // The new deploy dropped the module; the run's recorded spec still asks for the approval it got.
    // Without Worker Versioning, a deploy that changes a queue's tools must say it knows (AGENT_TOOLSET_CHECK=warn):
    // the killed worker still shows among the queue's pollers for a minute.
    const without = await startWorkerProcess({ ...common, env: { AGENT_TOOLSET_CHECK: 'warn' } });
    try {
      await handle.signal(approveSignal, { callId: 's0_0', by: 'alice' });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'failed', errorType: 'ToolNotOffered' });
      expect(r.error).toContain('tool write_note is not offered by worker');
      expect(r.error).toContain('toolOutageMs');
      expect(existsSync(file(input.workspace, 'notes/late.txt'))).toBe(false);
    } finally {
      await without.kill();
    }
  });
});
