// What the live stream costs a run nobody reads (issue 38, item 2): the model
// activity publishes tokens (each batch a signal, one Temporal Action) only
// while a reader is attached, so an unwatched run on a worker streaming
// tokens costs the same Actions as on a worker with the stream off; a
// watched run still gets the tokens as they arrive; and a reader attaching
// late still reads what every turn said (the workflow publishes an
// unwatched reply's text whole, at no Action). Counted from each run's history.
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { countActions } from '../bench/actions.js';
import { AgentClient } from '../client/index.js';
import { approveSignal } from '../common/run-messages.js';
import type { AgentInput } from '../common/contract.js';
import type { RunEventItem } from '../client/index.js';
import { PUBLISH_SIGNAL } from '../workflows/run-stream.js';
import { freshWorkspace, marker, providerRequests, useHarness, waitFor, waitForApproval } from './helpers/harness.js';

const { EventType } = proto.temporal.api.enums.v1;
const h = useHarness();
const plan: AgentInput = { task: 'Which file mentions a timeout?', model: 'plan' };

type History = Awaited<ReturnType<ReturnType<typeof h.client.workflow.getHandle>['fetchHistory']>>;
const publishSignals = (history: History) =>
  (history.events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && e.workflowExecutionSignaledEventAttributes?.signalName === PUBLISH_SIGNAL).length;

/** Every item of a run's stream from offset 0 to its end, read as a client reads it. */
async function readAll(workflowId: string): Promise<RunEventItem[]> {
  const out: RunEventItem[] = [];
  for await (const item of new AgentClient({ client: h.client }).getHandle(workflowId).events(0)) out.push(item);
  return out;
}

const tokens = (items: RunEventItem[], turn: number) => items.filter((i) => i.type === 'token' && i.turn === turn) as Extract<RunEventItem, { type: 'token' }>[];
const ends = (items: RunEventItem[]) => items.filter((i) => i.type === 'token_end') as Extract<RunEventItem, { type: 'token_end' }>[];

describe('the live stream costs nothing when nobody watches', () => {
  it('an unwatched run streaming tokens sends no publish signal and costs the Actions of a run with the stream off; a late reader still reads each reply', async () => {
    const off = await h.startWorker({ taskQueue: `stream-off-${freshWorkspace()}`, stream: 'events' });
    try {
      const [onTag, offTag] = [marker(), marker()];
      const unwatched = await h.start({ ...plan, task: `${plan.task} ${onTag}`, workspace: freshWorkspace() });
      expect((await unwatched.result()).status).toBe('completed');
      const offHandle = await h.client.workflow.start('agentRun', { taskQueue: off.taskQueue, workflowId: `stream-off-run-${freshWorkspace()}`, args: [{ ...plan, task: `${plan.task} ${offTag}`, workspace: freshWorkspace() }] });
      expect(((await offHandle.result()) as { status: string }).status).toBe('completed');
      const [a, b] = await Promise.all([unwatched.fetchHistory(), offHandle.fetchHistory()]);
      expect(publishSignals(a)).toBe(0);
      expect(publishSignals(b)).toBe(0);
      const [ca, cb] = [countActions(a), countActions(b)];
      expect(ca.signals).toBe(0);
      expect(ca.actions).toBe(cb.actions);

      // The reply's text reached the stream anyway: one token item (and its end) for the answer, from the workflow.
      const items = await readAll(unwatched.workflowId);
      const answer = (await unwatched.result()).output;
      expect(tokens(items, 3).map((t) => t.text).join('')).toBe(answer);
      expect(ends(items).map((e) => [e.turn, e.outcome])).toEqual([[3, 'counted']]);
      // Before the turn's own event, where a watched run's tokens are too.
      const turn3 = items.find((i) => i.type === 'turn' && 'turn' in i && i.turn === 3)!;
      expect(tokens(items, 3).every((t) => t.offset < turn3.offset)).toBe(true);
      // The streaming worker still asks the provider streamed (a Stop keeps what arrived); the one with the stream off, unstreamed.
      expect((await providerRequests(h.providerUrl, onTag)).map((r) => r.stream)).toEqual([true, true, true]);
      expect((await providerRequests(h.providerUrl, offTag)).map((r) => r.stream)).toEqual([false, false, false]);
      // A worker with the stream off publishes no text at all.
      expect((await readAll(offHandle.workflowId)).some((i) => i.type === 'token')).toBe(false);
    } finally {
      await off.shutdown();
    }
  });

  it('an unwatched write sends no publish signal either: its effect line comes back with its result and reaches a late reader between the call\'s start and result', async () => {
    const handle = await h.start({ task: 'Delete the old logs.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    await handle.signal(approveSignal, { callId: 'c2', by: 'stream-cost-test' });
    expect((await handle.result()).status).toBe('completed');
    const history = await handle.fetchHistory();
    expect(publishSignals(history)).toBe(0);
    expect(countActions(history).signals).toBe(1);
    // The delete's effect note, as the trace file has it, is on the stream once, after tool_start and before tool_result.
    const written = h.trace(handle.workflowId).filter((l) => l.type === 'effect' && l.callId === 'c2');
    expect(written.map((l) => l.verdict)).toEqual(['acted']);
    const items = await readAll(handle.workflowId);
    const onStream = items.filter((i) => i.type === 'effect');
    const own = (l: object) => { const { type, seq, step, attempt, callId, toolName, verdict } = l as Record<string, unknown>; return { type, seq, step, attempt, callId, toolName, verdict }; };
    expect(onStream.map(own)).toEqual(written.map(own));
    const at = (type: string) => items.find((i) => i.type === type && 'callId' in i && i.callId === 'c2')!.offset;
    expect(onStream[0].offset).toBeGreaterThan(at('tool_start'));
    expect(onStream[0].offset).toBeLessThan(at('tool_result'));
  });

  it('a watched run still gets its tokens as they arrive: the model activity publishes them (signals in its history)', async () => {
    const handle = await h.start({ task: 'Delete the old logs.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    // A reader attached while the run is parked: the answer after the approval is sent with it watching.
    const reading = readAll(handle.workflowId);
    // Attached: its poll is in the run's history (a poll is an update), so the workflow counts it.
    await waitFor('the reader\'s poll to reach the run', async () =>
      ((await handle.fetchHistory()).events ?? []).some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) ? true : null,
    );
    await handle.signal(approveSignal, { callId: 'c2', by: 'stream-cost-test' });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    const items = await reading;
    expect(tokens(items, 3).map((t) => t.text).join('')).toBe(result.output);
    expect(publishSignals(await handle.fetchHistory())).toBeGreaterThan(0);
  });
});
