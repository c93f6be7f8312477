// One MCP server's connection, over stdio (the worker spawns the server) or
// streamable HTTP. Connected at worker start to list the tools, and again on
// demand: when the server went away (it restarted, the process died, the HTTP
// session expired) the next call connects afresh, so Temporal's retry of a
// failed call reaches the new server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './config.js';

const CLIENT_INFO = { name: 'agent-harness', version: '0.1.0' };
const STDERR_TAIL = 2000;

export interface CallOptions {
  signal: AbortSignal;
  meta: Record<string, unknown>;
  onProgress(p: { progress: number; total?: number; message?: string }): void;
  /** The request's whole time, progress notifications or not: the caller keeps it inside its activity's. */
  timeoutMs: number;
}

export class McpConnection {
  private connecting: Promise<Client> | null = null;
  private connected: Client | null = null;
  private stderrTail = '';
  private closed = false;

  constructor(readonly server: McpServerConfig) {}

  /** For people: what this server is and how it is reached. */
  describe(): string {
    const s = this.server;
    return s.transport === 'stdio' ? `stdio: ${[s.command, ...s.args].join(' ')}` : `streamable HTTP: ${s.url.href}`;
  }

  /** Every tool the server lists (all pages). */
  async listTools(): Promise<Tool[]> {
    const client = await this.client();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.server.connectTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /** Connects (if not connected): a call that fails here never reached the server. */
  async ready(): Promise<void> {
    await this.client();
  }

  async callTool(name: string, args: Record<string, unknown>, opts: CallOptions): Promise<CallToolResult> {
    const client = await this.client();
    try {
      return (await client.callTool({ name, arguments: args, _meta: opts.meta }, undefined, {
        signal: opts.signal,
        // The progress callback also asks the server for progress (a progressToken in _meta).
        onprogress: opts.onProgress,
        // Progress resets the idle timeout, never the total: a server that keeps
        // reporting cannot keep the request alive past its activity's attempt.
        timeout: opts.timeoutMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: opts.timeoutMs,
      })) as CallToolResult;
    } catch (err) {
      // A broken transport: the next attempt connects again.
      if (!opts.signal.aborted && (!(err instanceof McpError) || err.code === ErrorCode.ConnectionClosed)) await this.drop(client);
      throw err;
    }
  }

  /** Ends the connection (a stdio server is stopped; an HTTP session is ended). Calls after this fail. */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.connected ?? (await this.connecting?.catch(() => null));
    if (client) await this.drop(client);
  }

  private client(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error(`MCP server ${this.server.name}: the connection is closed (the worker is stopping)`));
    if (this.connected) return Promise.resolve(this.connected);
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    const client = new Client(CLIENT_INFO);
    const transport = this.transport();
    client.onclose = () => {
      if (this.connected === client) this.connected = null;
    };
    try {
      await client.connect(transport, { timeout: this.server.connectTimeoutMs });
    } catch (err) {
      await client.close().catch(() => {});
      const why = err instanceof Error ? err.message : String(err);
      const tail = this.stderrTail.trim();
      throw new Error(`MCP server ${this.server.name} (${this.describe()}) failed to start: ${why}${tail ? `; its stderr ends: ${tail}` : ''}`);
    }
    this.connected = client;
    return client;
  }

  private transport(): StdioClientTransport | StreamableHTTPClientTransport {
    const s = this.server;
    if (s.transport === 'http') return new StreamableHTTPClientTransport(s.url, { requestInit: { headers: s.headers } });
    // The server gets a minimal environment (PATH, HOME, …) plus what the config gives it, not the worker's secrets.
    const t = new StdioClientTransport({ command: s.command, args: s.args, env: { ...getDefaultEnvironment(), ...s.env }, cwd: s.cwd, stderr: 'pipe' });
    this.stderrTail = '';
    t.stderr?.on('data', (b: Buffer) => (this.stderrTail = (this.stderrTail + b.toString()).slice(-STDERR_TAIL)));
    return t;
  }

  private async drop(client: Client): Promise<void> {
    if (this.connected === client) this.connected = null;
    const t = client.transport;
    if (t instanceof StreamableHTTPClientTransport && t.sessionId) await t.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}
