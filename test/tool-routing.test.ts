// Runs go only where their tools are, with two worker processes of different
// tool sets on one server: the built-ins, and the built-ins plus the notes
// tools (examples/tools/notes.ts). A worker never joins a queue whose other
// workers offer other tools; one whose tools differ from the built-in set
// polls a queue of its own, and every task of a run started there — its loop
// and its tool calls — is taken by a worker of that tool set.
import proto from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { DEFAULT_TASK_QUEUE } from '../common/contract.js';
import { livePollers, taskQueueFor, toolsetHash } from '../worker/tool-routing.js';
import { queuePollers } from '../node/queue-pollers.js';
import { Toolset } from '../activities/tools/toolset.js';
import { useHarness, waitFor } from './helpers/harness.js';
import { isDocumented } from './helpers/documented.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';
import type { agentRun } from '../workflows/index.js';

const { EventType } = proto.temporal.api.enums.v1;
const h = useHarness({ worker: false });
const workers: WorkerProcess[] = [];
afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
});

const NOTES = { AGENT_TOOLS_MODULES: 'examples/tools/notes.ts' };
const notesHash = toolsetHash([...BUILTIN_TOOLS.map((t) => t.name), 'write_note', 'count_words']);

async function worker(env: Record<string, string>, taskQueue = h.taskQueue): Promise<WorkerProcess> {
  const w = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env });
  workers.push(w);
  return w;
}

async function refused(env: Record<string, string>): Promise<string> {
  const err = await worker(env).then(
    () => null,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  expect(err, 'the worker joined a queue whose workers offer other tools').not.toBeNull();
  const line = (err ?? '').split('\n').find((l) => l.startsWith('worker not started: '));
  expect(line && isDocumented(line), line).toBe(true);
  return err ?? '';
}

/** The identities that took this run's workflow and activity tasks. */
async function takenBy(handle: WorkflowHandle<typeof agentRun>): Promise<Set<string>> {
  const events = (await handle.fetchHistory()).events ?? [];
  const ids = new Set<string>();
  for (const e of events) {
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) ids.add(e.workflowTaskStartedEventAttributes?.identity ?? '');
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) ids.add(e.activityTaskStartedEventAttributes?.identity ?? '');
  }
  return ids;
}

describe('runs go only where their tools are', () => {
  it('the built-in tool set keeps the contract’s queue name', () => {
    expect(taskQueueFor(null, new Toolset(BUILTIN_TOOLS))).toBe(DEFAULT_TASK_QUEUE);
  });

  // Three worker processes start one after another: minutes on a loaded 2-core machine.
  it('a worker with other tools refuses a queue whose workers offer the built-ins, names them, and joins with a warning only if told to', { timeout: 300_000 }, async () => {
    const builtins = await worker({});
    await waitFor('the built-ins worker polling', async () => (await livePollers(h.client, 'default', h.taskQueue, null)).some((p) => p.identity.startsWith(`${builtins.child.pid}@`)));
    const out = await refused(NOTES);
    expect(out).toContain(`task queue ${h.taskQueue} is polled by worker(s) offering other tools than this one (tools:${notesHash}`);
    expect(out).toContain(`${builtins.child.pid}@`);
    const warned = await worker({ ...NOTES, AGENT_TOOLSET_CHECK: 'warn' });
    const warning = warned.output().split('\n').find((l) => l.startsWith('warning (AGENT_TOOLSET_CHECK=warn): '));
    expect(warning).toContain(`warning (AGENT_TOOLSET_CHECK=warn): task queue ${h.taskQueue} is polled by worker(s) offering other tools`);
    expect(isDocumented(warning ?? ''), warning).toBe(true);
    await warned.kill();
  });

  // Two worker processes start, one is refused, one is stopped: minutes on a loaded 2-core machine.
  it('a redeploy of a single worker starts at once: while the old worker polls the new tool set is refused; once it is SIGTERM\'d the new one starts', { timeout: 300_000 }, async () => {
    const queue = `redeploy-${randomUUID().slice(0, 8)}`;
    const old = await worker({}, queue);
    await waitFor('the old worker polling', async () => (await livePollers(h.client, 'default', queue, null)).some((p) => p.identity.startsWith(`${old.child.pid}@`)));
    // Still polling: the conflict is reported, naming it.
    const refusal = await worker({ ...NOTES, AGENT_TASK_QUEUE: queue }, queue).then(
      () => null,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(refusal).toContain(`task queue ${queue} is polled by worker(s) offering other tools than this one (tools:${notesHash}`);
    expect(refusal).toContain(`${old.child.pid}@`);
    // The deploy: SIGTERM, as an orchestrator stops it, and wait for it to exit.
    const exited = new Promise((r) => old.child.once('exit', r));
    old.child.kill('SIGTERM');
    await exited;
    // Its last poll is still listed by DescribeTaskQueue (what used to refuse the new build for a minute)...
    expect((await queuePollers(h.client, 'default', queue)).some((p) => p.live && p.identity.startsWith(`${old.child.pid}@`))).toBe(true);
    // ...but it said it shut down: the new build with one more tool starts now.
    const next = await worker({ ...NOTES, AGENT_TASK_QUEUE: queue }, queue);
    expect(next.output()).toContain(`tools=${notesHash}`);
    expect(next.output()).not.toContain('offering other tools');
    await next.kill();
  });

  it('without a queue named, the other tool set polls its own, and every task of a run started there is taken by it', { timeout: 180_000 }, async () => {
    // AGENT_TASK_QUEUE empty counts as unset: the queue comes from the tools.
    const notes = await worker({ ...NOTES, AGENT_TASK_QUEUE: '' }, '');
    const ownQueue = `${DEFAULT_TASK_QUEUE}-${notesHash}`;
    const note = notes.output().split('\n').find((l) => l.startsWith('its tools differ from the built-in set'));
    expect(note).toContain(`polls a task queue of its own, ${ownQueue}`);
    expect(isDocumented(note ?? ''), note).toBe(true);
    expect(notes.output()).toContain(`taskQueue=${ownQueue} tools=${notesHash}`);
    const ws = `notes-${randomUUID().slice(0, 8)}`;
    mkdirSync(join(h.workspaceRoot, ws), { recursive: true });
    writeFileSync(join(h.workspaceRoot, ws, 'notes.txt'), 'three short words');
    // A read (a local activity, in the loop's worker) and a write (an activity of the queue).
    const script = JSON.stringify([[{ name: 'count_words', args: { path: 'notes.txt' } }], [{ name: 'write_note', args: { path: 'tmp/n.txt', text: 'hi' } }]]);
    const handles = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        h.client.workflow.start<typeof agentRun>('agentRun', {
          taskQueue: ownQueue,
          workflowId: `notes-run-${i}-${randomUUID().slice(0, 8)}`,
          args: [{ task: `Count, then note. script:${script}`, model: 'script', tools: ['count_words', 'write_note'], workspace: ws }],
        }),
      ),
    );
    for (const handle of handles) {
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', toolRuns: 2 });
      for (const id of await takenBy(handle)) expect(id).toMatch(new RegExp(`^${notes.child.pid}@\\S+ tools:${notesHash}$`));
    }
  });
});
