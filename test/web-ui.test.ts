// What the Web UI shows: each activity names itself ("model turn 2",
// "delete_file access.log approved by alice"), the run's details panel shows
// its live state, and the codec server answers a browser's CORS preflight.
import { describe, expect, it } from 'vitest';
import { findFreePort } from '../worker/dev-server/dev-server.js';
import { startCodecServer } from '../client/codec-server.js';
import { approveSignal } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';

const h = useHarness();

describe('the Web UI tells the story', () => {
  it('activity summaries name each step; the details panel shows what a parked run waits for', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: ws });
    await waitForApproval(handle, 'c2');
    const meta = await waitFor('the details of the parked run', async () => {
      const m = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
      return m.currentDetails?.includes('awaiting approval') ? m : null;
    });
    expect(meta.currentDetails).toContain('delete_file {"path":"access.log"}');
    expect(meta.currentDetails).toContain('**Task:** Free some space.');
    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    await handle.result();
    const conv = h.client.options.loadedDataConverter.payloadConverter;
    const summaries = ((await handle.fetchHistory()).events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes && e.userMetadata?.summary)
      .map((e) => conv.fromPayload<string>(e.userMetadata!.summary!));
    expect(summaries).toEqual(['model turn 1', 'model turn 2', 'delete_file access.log approved by alice', 'model turn 3']);
  });

  it("the codec server answers a browser's preflight with its origin (never `*` with credentials)", async () => {
    const port = await findFreePort();
    const { server } = await startCodecServer(port);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/decode`, { method: 'OPTIONS', headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST' } });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
      expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    } finally {
      server.close();
    }
  });
});
