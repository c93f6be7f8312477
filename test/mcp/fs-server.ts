// A small MCP server for the tests, written with the official SDK (McpServer):
// a filesystem-like server over one folder, run as its own process over stdio
// (the worker spawns it) or streamable HTTP (`--http PORT`, 0 for any; it
// prints `listening <url>` once it accepts connections).
//
// It keeps a record (`--record FILE`, one JSON line per event) so a test can
// see what really happened on the server's side: every idempotency key a
// write received, each step of the slow tool, and the moment the slow tool saw
// a cancellation.
//
//   list  {}                      files under the folder (not annotated: the config makes it read-only)
//   read  {path}                  a file's text (readOnlyHint)
//   write {path, content}         writes a file; a key it has seen before is answered without writing again
//
// Faults, as flags: `--ignore-keys` makes `write` behave like a third-party
// server (the idempotency key in _meta is ignored: every call writes);
// `--stall-after-write` makes it write, then never answer (until the call is
// cancelled): the outcome a client cannot know.
//   slow  {steps, stepMs}         reports progress each step, stops when cancelled (readOnlyHint)
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';

export const IDEMPOTENCY_META_KEY = 'io.agent-harness/idempotencyKey';

export interface RecordLine {
  at: string;
  tool: string;
  event: 'call' | 'progress' | 'cancelled' | 'done' | 'stalled';
  key?: string;
  path?: string;
  step?: number;
  reason?: string;
}

export function readRecord(file: string): RecordLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as RecordLine);
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

interface Faults {
  ignoreKeys: boolean;
  stallAfterWrite: boolean;
}

function buildServer(root: string, recordFile: string, faults: Faults): McpServer {
  const record = (line: Omit<RecordLine, 'at'>) => appendFileSync(recordFile, `${JSON.stringify({ at: new Date().toISOString(), ...line })}\n`);
  const inside = (p: string) => {
    const full = resolve(root, p);
    if (full !== root && !full.startsWith(root + sep)) throw new Error(`${p} is outside the served folder`);
    return full;
  };
  const text = (t: string, isError = false) => ({ content: [{ type: 'text' as const, text: t }], ...(isError ? { isError } : {}) });
  const server = new McpServer({ name: 'test-fs', version: '1.0.0' });

  server.registerTool('list', { description: 'List the files of the served folder.', inputSchema: {} }, () => {
    const files = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => relative(root, join(d.parentPath, d.name)))
      .sort();
    return text(files.join('\n'));
  });

  server.registerTool(
    'read',
    { description: 'Read a file of the served folder.', inputSchema: { path: z.string() }, annotations: { readOnlyHint: true } },
    ({ path }) => {
      const full = inside(path);
      return existsSync(full) ? text(readFileSync(full, 'utf8')) : text(`no such file: ${path}`, true);
    },
  );

  server.registerTool(
    'write',
    { description: 'Write a text file in the served folder.', inputSchema: { path: z.string(), content: z.string() }, annotations: { idempotentHint: true } },
    async ({ path, content }, extra) => {
      const key = extra._meta?.[IDEMPOTENCY_META_KEY];
      const k = typeof key === 'string' ? key : undefined;
      const seen = !faults.ignoreKeys && k !== undefined && readRecord(recordFile).some((l) => l.tool === 'write' && l.event === 'done' && l.key === k);
      record({ tool: 'write', event: 'call', key: k, path });
      if (seen) return text(`wrote ${path} (already done for this key)`);
      const full = inside(path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
      record({ tool: 'write', event: 'done', key: k, path });
      if (faults.stallAfterWrite) {
        record({ tool: 'write', event: 'stalled', key: k, path });
        await new Promise<void>((resolve) => (extra.signal.aborted ? resolve() : extra.signal.addEventListener('abort', () => resolve(), { once: true })));
        record({ tool: 'write', event: 'cancelled', key: k, path, reason: String(extra.signal.reason) });
      }
      return text(`wrote ${content.length} characters to ${path}`);
    },
  );

  server.registerTool(
    'slow',
    {
      description: 'A slow job: reports progress each step, stops when cancelled.',
      inputSchema: { steps: z.number().int().positive(), stepMs: z.number().int().positive() },
      annotations: { readOnlyHint: true },
    },
    async ({ steps, stepMs }, extra) => {
      const key = extra._meta?.[IDEMPOTENCY_META_KEY];
      const k = typeof key === 'string' ? key : undefined;
      const token = extra._meta?.progressToken;
      record({ tool: 'slow', event: 'call', key: k });
      for (let step = 1; step <= steps; step++) {
        const stopped = await new Promise<boolean>((done) => {
          if (extra.signal.aborted) return done(true);
          const t = setTimeout(() => done(false), stepMs);
          extra.signal.addEventListener('abort', () => (clearTimeout(t), done(true)), { once: true });
        });
        if (stopped) {
          record({ tool: 'slow', event: 'cancelled', key: k, step, reason: String(extra.signal.reason) });
          return text(`stopped at step ${step}`, true);
        }
        record({ tool: 'slow', event: 'progress', key: k, step });
        if (token !== undefined) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, total: steps, message: `step ${step} of ${steps}` } });
        }
      }
      record({ tool: 'slow', event: 'done', key: k });
      return text(`slow job finished ${steps} steps`);
    },
  );
  return server;
}

async function main() {
  const root = resolve(arg('--root') ?? process.cwd());
  const recordFile = resolve(arg('--record') ?? join(root, '..', 'mcp-record.jsonl'));
  const faults = { ignoreKeys: process.argv.includes('--ignore-keys'), stallAfterWrite: process.argv.includes('--stall-after-write') };
  mkdirSync(root, { recursive: true });
  const port = arg('--http');
  if (port === undefined) {
    await buildServer(root, recordFile, faults).connect(new StdioServerTransport());
    return;
  }
  // Stateful streamable HTTP: one transport (and server) per session, so a
  // notifications/cancelled reaches the server instance running the call.
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (!transport) {
        if (sid !== undefined || req.method !== 'POST') {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, t),
        });
        t.onclose = () => {
          if (t.sessionId) sessions.delete(t.sessionId);
        };
        await buildServer(root, recordFile, faults).connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      console.error(err);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  http.listen(Number(port), '127.0.0.1', () => {
    const a = http.address();
    console.log(`listening http://127.0.0.1:${typeof a === 'object' && a ? a.port : port}/mcp`);
  });
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
