// An MCP write through the effect protocol, against a real MCP server
// (test/mcp/fs-server.ts, its own process over stdio) that behaves like a
// third-party one (it ignores the idempotency key in _meta) and stalls after
// it wrote: the answer never comes. The request must end inside its
// activity's attempt, the write must land once (no blind retry), and the
// model must read that the outcome is unknown.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWorkerTools, type WorkerTools } from '../worker/toolset.js';
import { approveSignal, cancelSignal, transcriptQuery } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { readRecord } from './mcp/fs-server.js';
import { writeStallingFsConfig } from './mcp/stalling-config.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
/** Per attempt of the write: short, so the stalled call ends quickly. */
const TOOL_TIMEOUT_MS = 5000;

describe('an MCP write to a server that stalls after writing', () => {
  const { root, record, config } = writeStallingFsConfig(mkdtempSync(join(tmpdir(), 'mcp-stall-')));
  let tools: WorkerTools;
  let worker: { taskQueue: string; shutdown(): Promise<void> };

  beforeAll(async () => {
    writeFileSync(join(root, 'hello.txt'), 'hello\n');
    tools = await loadWorkerTools({ toolModules: [], toolNames: null, mcpConfigPath: config });
    worker = await h.startWorker({ taskQueue: `mcp-stall-${randomUUID().slice(0, 8)}`, toolset: tools.toolset });
  });

  afterAll(async () => {
    await worker?.shutdown();
    await tools?.close();
  });

  it('writes once, ends the request inside its attempt, and tells the model the outcome is unknown', async () => {
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue: worker.taskQueue,
      workflowId: `mcp-stall-${randomUUID().slice(0, 8)}`,
      args: [{ task: 'Write the report.', model: 'mcp', tools: ['fs_list', 'fs_write', 'fs_slow'], workspace: freshWorkspace(), toolTimeoutMs: TOOL_TIMEOUT_MS }],
    });
    await waitForApproval(handle, 'c2');
    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });

    const result = await waitFor('the write\'s result in the transcript', async () => {
      const m = (await handle.query(transcriptQuery)).find((x) => x.role === 'tool' && x.tool_call_id === 'c2');
      return m?.content ?? null;
    });
    // The run goes on to a slow job: not what this test is about.
    await handle.signal(cancelSignal, { reason: 'test done' });
    const r = await handle.result();
    expect(r.status).toBe('interrupted');

    expect(result).toMatch(
      /^outcome unknown: this attempt on \d+@\S+ started this fs_write call at \S+ and got no answer \(the MCP server fs did not answer within \d+ ms\); it may or may not have happened\. It was not tried again\.$/,
    );
    // The request gave up before its attempt's time was up: the margin is 1 s of the 5 s.
    const waited = Number(/within (\d+) ms/.exec(result)?.[1]);
    expect(waited).toBeLessThanOrEqual(TOOL_TIMEOUT_MS - 1000);
    // On the server's side: one call, one write, then the stall, which the client's cancellation ended.
    const writes = readRecord(record).filter((l) => l.tool === 'write');
    expect(writes.map((l) => l.event)).toEqual(['call', 'done', 'stalled', 'cancelled']);
    expect(readFileSync(join(root, 'out/report.txt'), 'utf8')).toBe('written through MCP');
    // One attempt of the write: it answered (unknown) itself; nothing was retried.
    const execs = h.trace(handle.workflowId).filter((l) => l.type === 'tool_exec' && l.callId === 'c2');
    expect(execs.map((l) => l.attempt)).toEqual([1]);
    expect(h.trace(handle.workflowId).find((l) => l.type === 'effect' && l.callId === 'c2')).toMatchObject({ verdict: 'unknown', reason: expect.stringContaining('did not answer') });
  });
});
