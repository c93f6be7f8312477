// Attacks on the lines a tool activity holds back while nobody watches
// (activities/tools/run-tool.ts): its progress and effect notes come back with
// the result and the workflow publishes them, at no signal. What must hold
// whatever the tool does: no line is lost or reordered on the stream; a tool
// that reports without end cannot grow its result (or the activity's memory)
// past the bound, its lines go out live instead; an attempt that throws
// publishes what it wrote before the retry; and a late reader reads every line
// between the call's start and its result.
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../activities/tools/builtin.js';
import { defineTool } from '../../activities/tools/define-tool.js';
import { Toolset } from '../../activities/tools/toolset.js';
import { AgentClient, type RunEventItem } from '../../client/index.js';
import type { agentRun } from '../../workflows/index.js';
import { PUBLISH_SIGNAL } from '../../workflows/run-stream.js';
import { freshWorkspace, useHarness } from '../helpers/harness.js';

const { EventType } = proto.temporal.api.enums.v1;
const h = useHarness();

/** Reports `steps` progress lines of `size` characters each, then answers. */
const chatty = defineTool({
  name: 'chatty',
  description: 'Reports progress, a lot of it.',
  parameters: { type: 'object', properties: { steps: { type: 'integer' }, size: { type: 'integer' } }, required: ['steps', 'size'] },
  readOnly: true,
  run: async (ctx, args) => {
    const { steps, size } = args as { steps: number; size: number };
    for (let i = 1; i <= steps; i++) ctx.progress(`${i}:`.padEnd(size, 'x'));
    return `reported ${steps}`;
  },
});

let flakyTries = 0;
/** Reports three steps, then fails its first attempt on infrastructure (Temporal retries it); the second answers. */
const flaky = defineTool({
  name: 'flaky_progress',
  description: 'Reports progress, then fails once.',
  parameters: { type: 'object', properties: {} },
  readOnly: true,
  run: async (ctx) => {
    flakyTries += 1;
    for (let i = 1; i <= 3; i++) ctx.progress(`try ${flakyTries} step ${i}`);
    if (flakyTries === 1) throw new Error('the disk went away');
    return 'done on the second try';
  },
});

const toolset = new Toolset([...BUILTIN_TOOLS, chatty, flaky]);
const script = (turns: unknown[]) => `Do it. script:${JSON.stringify(turns)}`;

async function run(taskQueue: string, call: { name: string; args: Record<string, unknown> }) {
  const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
    taskQueue,
    workflowId: `held-${call.name}-${freshWorkspace()}`,
    args: [{ model: 'script', workspace: freshWorkspace(), task: script([[call]]), tools: [call.name] }],
  });
  expect((await handle.result()).status).toBe('completed');
  const history = await handle.fetchHistory();
  const signals = (history.events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && e.workflowExecutionSignaledEventAttributes?.signalName === PUBLISH_SIGNAL).length;
  const items: RunEventItem[] = [];
  for await (const item of new AgentClient({ client: h.client }).getHandle(handle.workflowId).events(0)) items.push(item);
  const trace = h.trace(handle.workflowId);
  return { signals, items, trace };
}

/** The progress labels the stream carries, in stream order, and whether each lies between the call's start and result. */
function progressOnStream(items: RunEventItem[]) {
  const start = items.find((i) => i.type === 'tool_start')!.offset;
  const result = items.find((i) => i.type === 'tool_result')!.offset;
  const progress = items.filter((i) => i.type === 'tool_progress') as (RunEventItem & { label: string; attempt: number })[];
  return { labels: progress.map((p) => p.label), inside: progress.every((p) => p.offset > start && p.offset < result), gaps: items.filter((i) => i.type === 'gap').length };
}

describe('a tool\'s lines held while nobody watches', () => {
  let worker: { taskQueue: string; shutdown(): Promise<void> };
  beforeAll(async () => {
    worker = await h.startWorker({ taskQueue: `${h.taskQueue}-held`, toolset });
  }, 120_000);
  afterAll(async () => {
    await worker?.shutdown();
  });

  it('a few lines: no signal, every line on the stream in order between the call\'s start and result', async () => {
    const { signals, items, trace } = await run(worker.taskQueue, { name: 'chatty', args: { steps: 5, size: 10 } });
    expect(signals).toBe(0);
    const s = progressOnStream(items);
    expect(s.labels).toEqual(trace.filter((l) => l.type === 'tool_progress').map((l) => l.label));
    expect(s.labels).toHaveLength(5);
    expect(s.inside).toBe(true);
    expect(s.gaps).toBe(0);
  });

  it('past the bound (500 lines, or 40 lines of 4,000 characters): the lines go out live, none lost, none twice, in order', async () => {
    for (const args of [{ steps: 500, size: 8 }, { steps: 40, size: 4_000 }]) {
      const { signals, items, trace } = await run(worker.taskQueue, { name: 'chatty', args });
      // Published live: the activity's signals are in the run's history.
      expect(signals).toBeGreaterThan(0);
      const s = progressOnStream(items);
      expect(s.labels).toEqual(trace.filter((l) => l.type === 'tool_progress').map((l) => l.label));
      expect(s.labels).toHaveLength(args.steps);
      expect(new Set(s.labels).size).toBe(args.steps);
      expect(s.inside).toBe(true);
      expect(s.gaps).toBe(0);
    }
  });

  it('an attempt that throws: what it wrote goes out before the retry\'s lines, and the retry\'s come with its result', async () => {
    flakyTries = 0;
    const { signals, items } = await run(worker.taskQueue, { name: 'flaky_progress', args: {} });
    // One signal at most for the failed attempt's three lines (its first goes at once, the rest with the close).
    expect(signals).toBeGreaterThan(0);
    expect(signals).toBeLessThanOrEqual(2);
    const s = progressOnStream(items);
    expect(s.labels).toEqual([1, 2, 3].map((i) => `try 1 step ${i}`).concat([1, 2, 3].map((i) => `try 2 step ${i}`)));
    expect(s.inside).toBe(true);
  });
});
