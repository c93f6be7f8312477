// Attacks on what makes a run pay for its tokens (issue 38, item 2): the
// model activity publishes tokens, a signal a batch, only while a reader is
// attached, which the workflow learns from the polls it admits. A poll its
// validator refuses (a hostile offset) never reaches the handler, so it does
// not make a run nobody reads pay for tokens; the run still ends, and its
// answer still reaches a reader that comes later (published whole by the workflow).
import proto from '@temporalio/proto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../../client/agent-client.js';
import { approveSignal } from '../../common/run-messages.js';
import type { RunEventItem } from '../../common/stream-items.js';
import { PUBLISH_SIGNAL } from '../../workflows/run-stream.js';
import { freshWorkspace, useHarness, waitForApproval } from '../helpers/harness.js';

const { EventType } = proto.temporal.api.enums.v1;
const h = useHarness();
const POLL = '__temporal_workflow_stream_poll';

describe('refused polls do not make a run pay for tokens', () => {
  it('polls with hostile offsets are refused, the reply after them publishes no token signal, and a later reader reads the answer', async () => {
    const handle = await h.start({ task: 'Delete the old logs.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    for (const from of ['x', -1, 1.5]) {
      const refused = await handle.executeUpdate(POLL, { args: [{ topics: ['events'], from_offset: from }] }).then(
        () => 'accepted',
        (err: unknown) => (err instanceof WorkflowUpdateFailedError && err.cause instanceof Error ? err.cause.message : String(err)),
      );
      expect(refused).toMatch(/from_offset must be a whole number/);
    }
    await handle.signal(approveSignal, { callId: 'c2', by: 'stream-watch-attack' });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    const events = (await handle.fetchHistory()).events ?? [];
    // No poll was admitted: the run never counted a reader.
    expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)).toBe(false);
    const items: RunEventItem[] = [];
    for await (const item of new AgentClient({ client: h.client }).getHandle(handle.workflowId).events(0)) items.push(item);
    // The answer's text is one item, the workflow's (the activity streaming it would have sent its first
    // delta at once and the rest in a batch: two items, two signals); it is the whole answer.
    const said = items.filter((i): i is Extract<RunEventItem, { type: 'token' }> => i.type === 'token' && i.turn === 3);
    expect(said.map((t) => t.text)).toEqual([result.output]);
    // The publish signals left are the approved delete_file activity's trace line (tool lines are not gated by readers).
    const signals = events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && e.workflowExecutionSignaledEventAttributes?.signalName === PUBLISH_SIGNAL);
    const activityLines = items.filter((i) => i.type !== 'token' && i.type !== 'token_end' && 'step' in i && i.step !== undefined);
    expect(signals.length).toBeLessThanOrEqual(activityLines.length);
  });
});
