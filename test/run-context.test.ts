// The run context (issue 37, item 1): a caller's JSON object every tool
// receives as ctx.run.context, sub-agents inherit, the status shows, and the
// model never sees. Stored once per run: a tool call's activity input carries
// its key only, and the figure of what it adds to history per turn is measured
// here on real runs.
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineSubAgent, defineTool, type ToolRunInfo } from '../activities/tools/define-tool.js';
import { Toolset } from '../activities/tools/toolset.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { statusQuery } from '../common/run-messages.js';
import type { AgentInput } from '../common/contract.js';
import { freshWorkspace, useHarness } from './helpers/harness.js';

const h = useHarness({ worker: false });

/** What each call of `whoami` saw, by the run's marker (its `tag` argument). */
const seen = new Map<string, ToolRunInfo[]>();
const whoami = defineTool({
  name: 'whoami',
  description: 'Says which run this is.',
  parameters: { type: 'object', properties: { tag: { type: 'string' }, n: { type: 'number' } }, required: ['tag'], additionalProperties: false },
  readOnly: true,
  // The result names nothing of the context: whatever the model reads, it did not get from here.
  run: async (ctx, args) => {
    seen.set(args.tag, [...(seen.get(args.tag) ?? []), ctx.run]);
    return 'noted';
  },
});
const delegate = defineSubAgent({
  name: 'delegate',
  description: 'Hands a task to a helper agent.',
  parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'], additionalProperties: false },
  readOnly: true,
  subAgent: { taskArgument: 'task', tools: ['whoami'] },
});
const toolset = new Toolset([...BUILTIN_TOOLS, whoami, delegate]);

let worker: { taskQueue: string; shutdown(): Promise<void> };
let loopQueue: string;
const split: { shutdown(): Promise<void> }[] = [];

beforeAll(async () => {
  worker = await h.startWorker({ toolset });
  // A queue whose loop runs on one worker and whose tools run on another: the tool's worker never resolved the run's configuration.
  loopQueue = `rc-split-${randomUUID().slice(0, 8)}`;
  split.push(await h.startWorker({ taskQueue: loopQueue, toolset, loopOnly: true }));
  split.push(await h.startWorker({ taskQueue: loopQueue, toolset, activitiesOnly: true }));
});
afterAll(async () => {
  for (const w of split) await w.shutdown();
  await worker?.shutdown();
});

const script = (tag: string, turns: number): string => `Who am I? script: ${JSON.stringify(Array.from({ length: turns }, (_, n) => [{ name: 'whoami', args: { tag, n } }]))}`;
const input = (tag: string, turns: number, extra: Partial<AgentInput> = {}): AgentInput => ({ task: script(tag, turns), model: 'script', tools: ['whoami'], workspace: freshWorkspace(), ...extra });

/** The run's history: its size as Temporal stores it (protobuf), the payloads' bytes as text, and the runTool inputs' bytes. */
async function historyOf(workflowId: string): Promise<{ text: string; bytes: number; toolInputBytes: number }> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  const bytes = temporal.api.history.v1.History.encode(history).finish().length;
  const texts: string[] = [];
  const todo: unknown[] = [history.events];
  while (todo.length > 0) {
    const v = todo.pop();
    if (ArrayBuffer.isView(v)) texts.push(Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8'));
    else if (typeof v === 'object' && v !== null) todo.push(...Object.values(v));
  }
  const toolInputBytes = (history.events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'runTool')
    .reduce((n, a) => n + (a?.input?.payloads ?? []).reduce((m, p) => m + (p.data?.length ?? 0), 0), 0);
  return { text: texts.join('\n'), bytes, toolInputBytes };
}

describe('runContext', () => {
  it('reaches every tool call as ctx.run.context, shows in the status, and never reaches the model; not part of definitionHash', async () => {
    const tag = `t-${randomUUID().slice(0, 8)}`;
    const secret = `tenant-${randomUUID()}`;
    const runContext = { tenant: secret, user: { id: 'u-17', roles: ['support'] }, ticket: 4711 };
    const handle = await h.client.workflow.start('agentRun', { taskQueue: worker.taskQueue, workflowId: `rc-${tag}`, args: [input(tag, 2, { runContext, debug: true })] });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', toolRuns: 2 });
    expect(seen.get(tag)).toEqual([
      { workflowId: `rc-${tag}`, context: runContext },
      { workflowId: `rc-${tag}`, context: runContext },
    ]);
    // Ops see whose run it is.
    expect((await handle.query(statusQuery)).runContext).toEqual(runContext);
    // The model's requests (written whole by `debug`) never carried it.
    const requests = h.trace(`rc-${tag}`).filter((l) => l.type === 'model_request');
    expect(requests.length).toBe(3);
    expect(JSON.stringify(requests)).not.toContain(secret);
    expect(JSON.stringify(requests)).toContain(tag);
    // The same run without a context has the same definition.
    const bare = await h.client.workflow.execute('agentRun', { taskQueue: worker.taskQueue, workflowId: `rc-bare-${tag}`, args: [input(tag, 2)] });
    expect(bare.definitionHash).toBe(r.definitionHash);
    expect(seen.get(tag)?.[2]).toEqual({ workflowId: `rc-bare-${tag}`, context: {} });
  });

  it('history holds it once per run: a tool call adds its 64-character key, not the object (measured over 1 and 5 turns, 4 KiB context)', async () => {
    const blob = 'x'.repeat(4096 - 30);
    const runContext = { tenant: 'acme', blob };
    const measure = async (turns: number, ctx: boolean) => {
      const tag = `m-${randomUUID().slice(0, 8)}`;
      const id = `rc-measure-${tag}`;
      const r = await h.client.workflow.execute('agentRun', { taskQueue: worker.taskQueue, workflowId: id, args: [input(tag, turns, ctx ? { runContext } : {})] });
      expect(r).toMatchObject({ status: 'completed', toolRuns: turns });
      const t = await historyOf(id);
      return { ...t, copies: t.text.split(blob).length - 1 };
    };
    const runs = { with1: await measure(1, true), without1: await measure(1, false), with5: await measure(5, true), without5: await measure(5, false) };
    // The object is in history twice whatever the turns: the start input and the resolved configuration.
    expect(runs.with1.copies).toBe(2);
    expect(runs.with5.copies).toBe(2);
    // Each tool call's input carries the key alone: `,"runContextKey":"<64 hex>"`.
    const perCall = (runs.with5.toolInputBytes - runs.without5.toolInputBytes) / 5;
    expect(perCall).toBe((runs.with1.toolInputBytes - runs.without1.toolInputBytes) / 1);
    expect(perCall).toBeLessThan(100);
    console.log(
      `runContext of ${JSON.stringify(runContext).length} bytes: ${runs.with5.copies} copies in history whatever the turns; +${perCall} bytes per tool call; ` +
        `whole history +${runs.with1.bytes - runs.without1.bytes} bytes on a 1-turn run, +${runs.with5.bytes - runs.without5.bytes} on a 5-turn run (timing events make these vary by a few hundred)`,
    );
  });

  it('a tool on a worker that never saw the run gets it from the run itself', async () => {
    const tag = `s-${randomUUID().slice(0, 8)}`;
    const runContext = { tenant: `split-${tag}` };
    const r = await h.client.workflow.execute('agentRun', { taskQueue: loopQueue, workflowId: `rc-${tag}`, args: [input(tag, 2, { runContext })] });
    expect(r).toMatchObject({ status: 'completed', toolRuns: 2 });
    expect(seen.get(tag)?.map((s) => s.context)).toEqual([runContext, runContext]);
  });

  it("a sub-agent's tools get the parent's context", async () => {
    const tag = `c-${randomUUID().slice(0, 8)}`;
    const runContext = { tenant: `child-${tag}`, user: 'u-9' };
    const childTask = script(tag, 1);
    const task = `Delegate. script: ${JSON.stringify([[{ name: 'delegate', args: { task: childTask } }]])}`;
    const r = await h.client.workflow.execute('agentRun', {
      taskQueue: worker.taskQueue,
      workflowId: `rc-${tag}`,
      args: [{ task, model: 'script', tools: ['delegate'], workspace: freshWorkspace(), runContext }],
    });
    expect(r).toMatchObject({ status: 'completed' });
    const calls = seen.get(tag) ?? [];
    expect(calls).toHaveLength(1);
    expect(calls[0].context).toEqual(runContext);
    // The child's own run, not the parent's.
    expect(calls[0].workflowId).not.toBe(`rc-${tag}`);
  });
});
