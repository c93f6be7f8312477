// MCP servers as tools, end to end: a real MCP server (test/mcp/fs-server.ts,
// its own process) over stdio and over streamable HTTP, a real worker that
// lists its tools at start, and runs of the scripted `mcp` scenario. The
// server's own record says what happened on its side: a write that landed
// once, with the call's idempotency key; a slow call that saw the Stop.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../node/project-root.js';
import { parseMcpConfig } from '../activities/tools/mcp/config.js';
import { McpConnection } from '../activities/tools/mcp/connection.js';
import { harnessToolName } from '../activities/tools/mcp/naming.js';
import { resultText } from '../activities/tools/mcp/result.js';
import { toolPolicy } from '../activities/tools/mcp/policy.js';
import { IDEMPOTENCY_META_KEY } from '../activities/tools/mcp/tool-definition.js';
import { findFreePort } from '../worker/dev-server/dev-server.js';
import { loadWorkerTools, type WorkerTools } from '../worker/toolset.js';
import { approveSignal, cancelSignal, transcriptQuery } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { IDEMPOTENCY_META_KEY as SERVER_META_KEY, readRecord } from './mcp/fs-server.js';
import { startWorkerProcess } from './helpers/worker-process.js';
import { serverArgs, servedFolder, startHttpServer, type Served } from './mcp/served.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });
const MCP_TOOLS = ['fs_list', 'fs_write', 'fs_slow'];

function writeConfig(servers: Record<string, unknown>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mcp-config-')), 'mcp.json');
  writeFileSync(file, JSON.stringify({ servers }, null, 2));
  return file;
}

const stdioServer = (s: Served) => ({ command: process.execPath, args: serverArgs(s), cwd: PROJECT_ROOT });
const noModules = { toolModules: [], toolNames: null };

describe.each(['stdio', 'http'] as const)('an MCP server over %s', (transport) => {
  const served = servedFolder(transport);
  let http: Awaited<ReturnType<typeof startHttpServer>> | null = null;
  let tools: WorkerTools;
  let worker: { taskQueue: string; shutdown(): Promise<void> };

  beforeAll(async () => {
    if (transport === 'http') http = await startHttpServer(served);
    const where = http ? { url: http.url } : stdioServer(served);
    // `list` is not annotated by the server: the config makes it read-only. `write` is not read-only: approval by default.
    // Our own server: its readOnlyHint annotations (read, slow) are trusted; list is read-only by the config.
    const config = writeConfig({ fs: { ...where, tools: ['list', 'read', 'write', 'slow'], readOnly: ['list'], trustAnnotations: true, timeoutMs: 120_000 } });
    tools = await loadWorkerTools({ ...noModules, mcpConfigPath: config });
    worker = await h.startWorker({ taskQueue: `mcp-${transport}-${randomUUID().slice(0, 8)}`, toolset: tools.toolset });
  });

  afterAll(async () => {
    await worker?.shutdown();
    await tools?.close();
    await http?.stop();
  });

  it('lists the server tools at worker start, named by server, with their schemas and the policies', () => {
    const specs = tools.toolset.specs().filter((s) => s.origin === 'mcp:fs');
    expect(specs.map((s) => s.name)).toEqual(['fs_list', 'fs_read', 'fs_write', 'fs_slow']);
    const by = Object.fromEntries(specs.map((s) => [s.name, s]));
    expect(by.fs_list).toMatchObject({ readOnly: true, needsApproval: false });
    expect(by.fs_read).toMatchObject({ readOnly: true, needsApproval: false, parameters: { type: 'object', required: ['path'] } });
    expect(by.fs_write).toMatchObject({ readOnly: false, needsApproval: true, parameters: { required: ['path', 'content'] } });
    expect(by.fs_slow).toMatchObject({ readOnly: true, needsApproval: false, activity: { startToCloseTimeoutMs: 120_000 } });
    expect(by.fs_slow.activity?.local).toBeUndefined();
    expect(by.fs_write.description).toContain('(MCP server fs)');
    // The built-ins are still offered next to them.
    expect(tools.toolset.names()).toContain('read_file');
  });

  it('a run lists, parks the write for approval, writes once with its idempotency key, and a Stop reaches the slow call', async () => {
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue: worker.taskQueue,
      workflowId: `mcp-${transport}-${randomUUID().slice(0, 8)}`,
      args: [{ task: 'Write the report, then run the slow job.', model: 'mcp', tools: MCP_TOOLS, workspace: freshWorkspace() }],
    });
    const id = handle.workflowId;

    // The write waits for a person; nothing reached the server yet.
    const parked = await waitForApproval(handle, 'c2');
    expect(parked.interruption).toMatchObject({ type: 'approval', callId: 'c2', toolName: 'fs_write', args: { path: 'out/report.txt' } });
    expect(readRecord(served.record).filter((l) => l.tool === 'write')).toEqual([]);
    // The list ran (read-only, no approval) and the model read the server's answer.
    const listed = (await handle.query(transcriptQuery)).find((m) => m.role === 'tool' && m.tool_call_id === 'c1');
    expect(listed?.content).toContain('hello.txt');

    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });

    // The slow call is running and has reported progress: Stop it.
    await waitFor('progress of the slow MCP call', () => h.trace(id).some((l) => l.type === 'tool_progress' && l.callId === 'c3'));
    await handle.signal(cancelSignal, { reason: 'user pressed Stop' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' }, turns: 3 });

    // The write landed exactly once, with the call's idempotency key in _meta.
    const writes = readRecord(served.record).filter((l) => l.tool === 'write');
    expect(writes.map((l) => l.event)).toEqual(['call', 'done']);
    // The key names the run chain and the call by its occurrence: the second call the model proposed.
    expect(writes[0].key).toMatch(new RegExp(`^${id}@.+/call2$`));
    expect(writes[1].key).toBe(writes[0].key);
    expect(readFileSync(join(served.root, 'out/report.txt'), 'utf8')).toBe('written through MCP');

    // The server saw the cancellation, and reported no step after it. The reason is the one the
    // client put in notifications/cancelled (the connection stayed open: nothing else aborts the call).
    const slow = await waitFor('the server to record the cancellation', () => {
      const lines = readRecord(served.record).filter((l) => l.tool === 'slow');
      return lines.some((l) => l.event === 'cancelled') ? lines : null;
    });
    expect(slow[0]).toMatchObject({ event: 'call', key: expect.stringMatching(/\/call3$/) });
    expect(slow.at(-1)).toMatchObject({ event: 'cancelled', reason: expect.stringContaining('CancelledFailure') });
    expect(slow.filter((l) => l.event === 'done')).toEqual([]);
    const lastStep = slow.filter((l) => l.event === 'progress').at(-1)?.step ?? 0;
    expect(slow.at(-1)?.step).toBe(lastStep + 1);

    // The harness's side: the progress came through MCP progress notifications, none after the Stop reached the tool.
    await waitFor('run_stopped in the trace', () => h.events(id).some((l) => l.type === 'run_stopped'));
    const trace = h.trace(id).filter((l) => l.callId === 'c3');
    const cancelledAt = trace.findIndex((l) => l.type === 'tool_cancelled');
    expect(cancelledAt).toBeGreaterThan(0);
    expect(trace.filter((l) => l.type === 'tool_progress')[0]?.label).toBe('step 1 of 600');
    expect(trace.slice(cancelledAt).filter((l) => l.type === 'tool_progress')).toEqual([]);
    expect(h.events(id).at(-1)).toMatchObject({ type: 'run_stopped', status: 'interrupted' });
  });
});

describe('worker start with a bad MCP config', () => {
  const served = servedFolder('bad');

  it('a tool the config names but the server does not offer stops the start, naming what it offers', async () => {
    const config = writeConfig({ fs: { ...stdioServer(served), tools: ['list', 'delete'] } });
    await expect(loadWorkerTools({ ...noModules, mcpConfigPath: config })).rejects.toThrow(
      'MCP server fs: the config names tool "delete", which the server does not offer (it offers: list, read, write, slow)',
    );
  });

  it.each([
    ['readOnly', { readOnly: ['read_*'] }, '"read_*"'],
    ['requireApproval', { readOnly: ['read', 'list'], requireApproval: ['read_media'] }, '"read_media"'],
    ['skipApproval', { skipApproval: ['wrte'] }, '"wrte"'],
  ])('a %s pattern that matches no offered tool stops the start: a typo must not turn an approval off', async (field, policy, pattern) => {
    const config = writeConfig({ fs: { ...stdioServer(served), ...policy } });
    await expect(loadWorkerTools({ ...noModules, mcpConfigPath: config })).rejects.toThrow(
      `MCP server fs: ${field} names ${pattern}, which matches none of the tools it offers here (list, read, write, slow); fix the pattern or remove it`,
    );
  });

  it('a stdio server that fails to start stops the start with its stderr', async () => {
    const config = writeConfig({ broken: { command: process.execPath, args: ['-e', 'console.error("fs-server: cannot open /nowhere"); process.exit(3)'] } });
    await expect(loadWorkerTools({ ...noModules, mcpConfigPath: config })).rejects.toThrow(/^MCP server broken \(stdio: .+\) failed to start: .+; its stderr ends: fs-server: cannot open \/nowhere$/);
  });

  it('an HTTP server nobody listens on stops the start, naming its URL', async () => {
    const url = `http://127.0.0.1:${await findFreePort()}/mcp`;
    const config = writeConfig({ gone: { url } });
    await expect(loadWorkerTools({ ...noModules, mcpConfigPath: config })).rejects.toThrow(`MCP server gone (streamable HTTP: ${url}) failed to start`);
  });

  it('the worker process exits at start with the reason', async () => {
    const config = writeConfig({ fs: { ...stdioServer(served), tools: ['nope'] } });
    const started = startWorkerProcess({
      taskQueue: `mcp-bad-${randomUUID().slice(0, 8)}`,
      traceDir: h.traceDir,
      workspaceRoot: h.workspaceRoot,
      env: { AGENT_MCP_CONFIG: config },
    });
    await expect(started).rejects.toThrow(/worker exited \(1\) before it was ready:\nworker not started: MCP server fs: the config names tool "nope"/);
  });

  it('npm run mcp:tools prints what a worker with this config would offer', async () => {
    const config = writeConfig({ fs: { ...stdioServer(served), readOnly: ['list'] } });
    const child = spawn(process.execPath, ['--import', 'tsx', 'worker/mcp-tools.ts'], { cwd: PROJECT_ROOT, env: { ...process.env, AGENT_MCP_CONFIG: config } });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code, out).toBe(0);
    expect(out).toContain('fs (stdio: ');
    expect(out).toMatch(/fs_write {2}readOnly=false needsApproval=true {2}mcp:fs/);
    expect(out).toMatch(/fs_list {2}readOnly=true needsApproval=false/);
  });
});

describe('an MCP server that restarts', () => {
  it('the next call after a failed one connects again, so Temporal\'s retry reaches the new server', async () => {
    const s = servedFolder('restart');
    let server = await startHttpServer(s);
    const [cfg] = parseMcpConfig({ servers: { fs: { url: server.url } } }, { source: 'test', baseDir: tmpdir() });
    const conn = new McpConnection(cfg);
    const opts = { signal: new AbortController().signal, meta: {}, onProgress: () => {}, timeoutMs: 30_000 };
    try {
      expect((await conn.listTools()).map((t) => t.name)).toContain('write');
      await server.stop();
      server = await startHttpServer(s, Number(new URL(server.url).port));
      // The old session is unknown to the new process: this attempt fails (Temporal would retry it)…
      await expect(conn.callTool('list', {}, opts)).rejects.toThrow();
      // …and the retry connects afresh.
      expect(resultText(await conn.callTool('list', {}, opts))).toBe('hello.txt');
    } finally {
      await conn.close();
      await server.stop();
    }
  });
});

describe('MCP config, names and policies', () => {
  const parse = (servers: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => parseMcpConfig({ servers }, { source: 'mcp.json', baseDir: '/etc/agent', env });

  it('reads both transports, resolves cwd against the file, and takes secrets from the environment', () => {
    const [a, b] = parse(
      { a: { command: 'node', args: ['s.js'], cwd: 'servers', env: { TOKEN: '${A_TOKEN}' } }, b: { url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer ${B_TOKEN}' } } },
      { A_TOKEN: 'ta', B_TOKEN: 'tb' },
    );
    expect(a).toMatchObject({ transport: 'stdio', prefix: 'a', cwd: '/etc/agent/servers', env: { TOKEN: 'ta' }, trustAnnotations: false, tools: null });
    expect(b).toMatchObject({ transport: 'http', headers: { authorization: 'Bearer tb' } });
  });

  it('refuses what it cannot use, naming the setting', () => {
    expect(() => parse({ x: { command: 'a', url: 'http://b' } })).toThrow('mcp.json: servers.x needs exactly one of "command" (stdio) or "url" (streamable HTTP)');
    expect(() => parse({ x: { command: 'a', readonly: ['b'] } })).toThrow('servers.x.readonly is not a setting');
    expect(() => parse({ x: { url: 'ftp://b' } })).toThrow('servers.x.url must be http(s)');
    expect(() => parse({ x: { url: 'http://b', headers: { k: '${NOPE}' } } })).toThrow('servers.x.headers.k uses ${NOPE}, which is not set');
    expect(() => parse({ x: { command: 'a', timeoutMs: -1 } })).toThrow('servers.x.timeoutMs must be a positive integer');
    // A bad entry of a list or a map is named by its place.
    expect(() => parse({ x: { command: 'a', tools: ['a', 2] } })).toThrow('mcp.json: servers.x.tools[1] must be a string');
    expect(() => parse({ x: { command: 'a', env: { TOKEN: 7 } } })).toThrow('mcp.json: servers.x.env.TOKEN must be a string');
  });

  it('names follow TOOL_NAME: sanitised, at most 64 characters, long ones kept apart by a hash', () => {
    expect(harnessToolName('my.server', 'read file')).toBe('my_server_read_file');
    const long1 = harnessToolName('srv', `${'x'.repeat(70)}1`);
    const long2 = harnessToolName('srv', `${'x'.repeat(70)}2`);
    expect(long1).toHaveLength(64);
    expect(long1).not.toBe(long2);
  });

  it('approval: not read-only asks by default; requireApproval wins; untrusted annotations make nothing read-only', () => {
    const [s] = parse({ s: { command: 'a', readOnly: ['get_*'], requireApproval: ['get_secret'], skipApproval: ['ping'] } });
    expect(toolPolicy(s, 'get_user', undefined)).toEqual({ readOnly: true, needsApproval: false, idempotent: false });
    expect(toolPolicy(s, 'get_secret', undefined)).toEqual({ readOnly: true, needsApproval: true, idempotent: false });
    expect(toolPolicy(s, 'ping', undefined)).toEqual({ readOnly: false, needsApproval: false, idempotent: false });
    expect(toolPolicy(s, 'drop_table', undefined)).toEqual({ readOnly: false, needsApproval: true, idempotent: false });
    // Annotations are not trusted by default: a server's readOnlyHint alone asks a person.
    expect(toolPolicy(s, 'search', { readOnlyHint: true })).toEqual({ readOnly: false, needsApproval: true, idempotent: false });
    const [t] = parse({ t: { command: 'a', trustAnnotations: true } });
    expect(toolPolicy(t, 'search', { readOnlyHint: true })).toEqual({ readOnly: true, needsApproval: false, idempotent: false });
    const [u] = parse({ u: { command: 'a', trustAnnotations: false } });
    expect(toolPolicy(u, 'search', { readOnlyHint: true })).toEqual({ readOnly: false, needsApproval: true, idempotent: false });
  });

  it('idempotent writes: listed in the config, or marked idempotentHint by a trusted server; never a read-only tool', () => {
    const [s] = parse({ s: { command: 'a', idempotent: ['put_*'], readOnly: ['get_*'] } });
    expect(toolPolicy(s, 'put_value', undefined)).toMatchObject({ readOnly: false, idempotent: true });
    expect(toolPolicy(s, 'append_line', { idempotentHint: true })).toMatchObject({ idempotent: false });
    expect(toolPolicy(s, 'get_value', undefined)).toMatchObject({ readOnly: true, idempotent: false });
    const [t] = parse({ t: { command: 'a', trustAnnotations: true } });
    expect(toolPolicy(t, 'append_line', { idempotentHint: true })).toMatchObject({ readOnly: false, idempotent: true });
    expect(() => parse({ u: { command: 'a', idempotent: 'put_*' } })).toThrow('mcp.json: servers.u.idempotent must be a list of strings');
  });

  it('the test server reads the key where the harness sends it', () => {
    expect(SERVER_META_KEY).toBe(IDEMPOTENCY_META_KEY);
  });
});
