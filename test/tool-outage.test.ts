// A tool whose server goes down under a running run: after the tool
// activity's own retries, the call waits it out (status, details and
// AgentStatus say `waiting_for_tool`, naming the call), and completes once
// the server is back; a Stop ends a waiting run at once with the call on
// record as stopped; past its allowance the run fails naming toolOutageMs.
// The outage is a real MCP server (test/mcp/fs-server.ts) stopped and
// started again on its port, so each test waits for events, not time.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentInput, RunStatusView } from '../common/contract.js';
import { cancelSignal, statusQuery, transcriptQuery } from '../common/run-messages.js';
import { AGENT_STATUS } from '../common/search-attributes.js';
import { loadWorkerTools, type WorkerTools } from '../worker/toolset.js';
import { freshWorkspace, useHarness, waitFor } from './helpers/harness.js';
import { servedFolder, startHttpServer, type HttpServer } from './mcp/served.js';

const h = useHarness({ worker: false });
/** The activity's own 5 attempts take ~8 s, the first wait 15 s: each test is allowed minutes. */
const OUTAGE_TEST_MS = 180_000;

const listing = (extra: Partial<AgentInput> = {}): AgentInput => ({
  task: `List the served folder. script: ${JSON.stringify([[{ name: 'fs_list', args: {} }]])}`,
  model: 'script',
  tools: ['fs_list'],
  workspace: freshWorkspace(),
  ...extra,
});

async function waitingStatus(handle: { query: (q: typeof statusQuery) => Promise<RunStatusView> }): Promise<RunStatusView> {
  return waitFor('the run to say it waits for the tool', async () => {
    const s = await handle.query(statusQuery);
    return s.agentStatus === 'waiting_for_tool' ? s : null;
  }, 120_000);
}

describe('an MCP server that goes down under a run', () => {
  const served = servedFolder('outage');
  let server: HttpServer;
  let port: number;
  let tools: WorkerTools;
  let worker: { shutdown(): Promise<void> };

  beforeAll(async () => {
    server = await startHttpServer(served);
    port = Number(new URL(server.url).port);
    const config = join(mkdtempSync(join(tmpdir(), 'mcp-config-')), 'mcp.json');
    writeFileSync(config, JSON.stringify({ servers: { fs: { url: server.url, tools: ['list'], readOnly: ['list'] } } }));
    // The worker lists the server's tools at its start, so the server is up then.
    tools = await loadWorkerTools({ toolModules: [], toolNames: null, mcpConfigPath: config });
    worker = await h.startWorker({ taskQueue: h.taskQueue, toolset: tools.toolset });
  });

  afterAll(async () => {
    await worker?.shutdown();
    await tools?.close();
    await server?.stop();
  });

  it('is waited out: the status names the call and the last error; the run completes once the server is back', async () => {
    await server.stop();
    const handle = await h.start(listing());
    const s = await waitingStatus(handle);
    expect(s.status).toBe('running');
    expect(s.modelOutage).toBeUndefined();
    expect(s.toolOutage).toMatchObject({ toolName: 'fs_list', callId: 's0_0', tries: 0, errorType: 'McpServerUnreachable' });
    expect(s.toolOutage?.lastError).toContain('MCP server fs');
    // Six hours by default, from when the activity's retries ran out.
    expect(Date.parse(s.toolOutage?.giveUpAt ?? '') - Date.parse(s.toolOutage?.since ?? '')).toBe(6 * 3600_000);
    expect((await handle.describe()).typedSearchAttributes.get(AGENT_STATUS)).toBe('waiting_for_tool');

    server = await startHttpServer(served, port);
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', toolRuns: 1 });
    const result = (await handle.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 's0_0');
    expect(result?.content).toContain('hello.txt');
    const after = await handle.query(statusQuery);
    expect(after.toolOutage).toBeUndefined();
    expect((await handle.describe()).typedSearchAttributes.get(AGENT_STATUS)).toBe('completed');
    const lines = h.events(handle.workflowId);
    expect(lines.filter((l) => l.type === 'tool_waiting').length).toBeGreaterThanOrEqual(1);
    expect(lines.filter((l) => l.type === 'tool_recovered')).toEqual([expect.objectContaining({ toolName: 'fs_list', callId: 's0_0' })]);
    // One start and one result for the call, however many tries it took.
    expect(lines.filter((l) => l.type === 'tool_start')).toHaveLength(1);
    expect(lines.filter((l) => l.type === 'tool_result')).toEqual([expect.objectContaining({ callId: 's0_0', ok: true })]);
  }, OUTAGE_TEST_MS);

  it('a Stop while waiting ends the run at once, interrupted, with the call on record as stopped', async () => {
    await server.stop();
    const handle = await h.start(listing());
    await waitingStatus(handle);
    await handle.signal(cancelSignal, { reason: 'the file server is down, stop' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'the file server is down, stop' } });
    expect((await handle.describe()).typedSearchAttributes.get(AGENT_STATUS)).toBe('interrupted');
    // The transcript stays valid: the call has its answer, saying it was stopped.
    const result = (await handle.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 's0_0');
    expect(result?.content).toMatch(/stopped/i);
  }, OUTAGE_TEST_MS);

  it('past its allowance the run fails with the last error, naming toolOutageMs', async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    const handle = await h.start(listing({ toolOutageMs: 1000 }), `tool-outage-${randomUUID().slice(0, 8)}`);
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'failed', errorType: 'McpServerUnreachable' });
    expect(r.error).toContain('MCP server fs');
    expect(r.error).toContain('toolOutageMs');
  }, OUTAGE_TEST_MS);
});
