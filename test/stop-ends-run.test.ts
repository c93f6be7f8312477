// Cancellation reaches into the running tool: a Stop ends the run as
// interrupted/cancelled with its reason, and the slow scan reports nothing after it.
import { describe, expect, it } from 'vitest';
import { cancelSignal, statusQuery } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';

const h = useHarness();
const task = 'Scan the archive.';

describe('slow scenario', () => {
  it('completes with progress lines when left alone', async () => {
    const handle = await h.start({ task, model: 'slow' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
    expect(r.output).toContain('scanned 1200 files');
    const progress = h.trace(handle.workflowId).filter((l) => l.type === 'tool_progress');
    expect(progress.map((l) => l.label)).toEqual([200, 400, 600, 800, 1000, 1200].map((n) => `scanned ${n} of 1200 files`));
  });

  it('the cancel signal mid-scan stops the tool at once: interrupted/cancelled, no progress after the Stop', async () => {
    const handle = await h.start({ task, model: 'slow' });
    await waitFor('the first progress line', () => h.trace(handle.workflowId).some((l) => l.type === 'tool_progress'));
    await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' }, turns: 1 });
    // The run waited for the scan to acknowledge the Stop (WAIT_CANCELLATION_COMPLETED): in
    // history, the scan's cancellation is recorded before the run's result.
    const events = (await handle.fetchHistory()).events ?? [];
    const cancelledAt = events.findIndex((e) => e.activityTaskCanceledEventAttributes);
    expect(cancelledAt).toBeGreaterThan(events.findIndex((e) => e.activityTaskCancelRequestedEventAttributes));
    expect(cancelledAt).toBeLessThan(events.findIndex((e) => e.workflowExecutionCompletedEventAttributes));
    // And the scan wrote no progress once the Stop reached it. Ordered by its own writes (one
    // process appends them in turn), not by timestamps from two writers.
    await waitFor('run_stopped in the trace', () => h.events(handle.workflowId).some((l) => l.type === 'run_stopped'));
    const scan = h.trace(handle.workflowId).filter((l) => l.step !== undefined && l.toolName === 'scan_archive');
    const stopReached = scan.findIndex((l) => l.type === 'tool_cancelled');
    expect(stopReached).toBeGreaterThan(0);
    expect(scan.slice(stopReached).filter((l) => l.type === 'tool_progress')).toEqual([]);
    expect(scan.filter((l) => l.type === 'tool_progress').length).toBeLessThan(6);
    expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'interrupted', reason: 'user pressed Stop' });
  });

  it('native workflow cancellation ends the run the same way', async () => {
    const handle = await h.start({ task, model: 'slow' });
    await waitFor('the first progress line', () => h.trace(handle.workflowId).some((l) => l.type === 'tool_progress'));
    await handle.cancel();
    const r = await handle.result();
    expect(r.status).toBe('interrupted');
    expect(r.interruption).toMatchObject({ type: 'cancelled' });
  });

  it('a cancel while parked on an approval ends the wait; a second cancel is ignored and traced', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task, model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    await handle.signal(cancelSignal, { reason: 'changed my mind' });
    await handle.signal(cancelSignal, { reason: 'again' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'changed my mind' } });
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'interrupted' });
    // Both cancels can land while the first one's workflow task is in flight, so the
    // server makes the worker redo that task with both: the trace keeps the redo only.
    await waitFor('the ignored cancel in the trace', () => h.events(handle.workflowId).some((l) => l.type === 'signal_ignored'));
    const trace = h.events(handle.workflowId);
    expect(trace.some((l) => l.type === 'signal_ignored' && l.signal === 'cancel')).toBe(true);
    expect(trace.filter((l) => l.type === 'run_stopped')).toHaveLength(1);
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i + 1));
  });
});
