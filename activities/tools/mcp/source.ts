// The MCP servers of a worker as a tool source: connects to each, lists its
// tools, applies the config (which tools, their policies) and gives the
// harness's tool definitions, plus a close() for when the worker stops.
import type { ToolDefinition } from '../define-tool.js';
import type { McpServerConfig } from './config.js';
import { McpConnection } from './connection.js';
import { anyMatches, globMatches } from './glob.js';
import { mcpToolDefinition } from './tool-definition.js';

export interface McpToolSource {
  tools: ToolDefinition[];
  /** Per server: the connection and the MCP names of the tools it offers. */
  servers: { name: string; connection: McpConnection; mcpTools: string[] }[];
  close(): Promise<void>;
}

/** Fails (after closing whatever it opened) when a server cannot be reached or the config names a tool no server has. */
export async function loadMcpTools(configs: readonly McpServerConfig[]): Promise<McpToolSource> {
  const connections = configs.map((c) => new McpConnection(c));
  const close = async () => {
    await Promise.all(connections.map((c) => c.close()));
  };
  try {
    const servers = await Promise.all(
      connections.map(async (connection) => {
        const cfg = connection.server;
        const listed = await connection.listTools().catch((err: unknown) => {
          throw err instanceof Error && err.message.startsWith('MCP server') ? err : new Error(`MCP server ${cfg.name} (${connection.describe()}): listing its tools failed: ${String(err)}`);
        });
        const names = listed.map((t) => t.name);
        for (const p of cfg.tools ?? []) {
          if (!names.some((n) => globMatches(p, n))) throw new Error(`MCP server ${cfg.name}: the config names tool ${JSON.stringify(p)}, which the server does not offer (it offers: ${names.join(', ') || 'no tools'})`);
        }
        const chosen = cfg.tools ? listed.filter((t) => anyMatches(cfg.tools ?? [], t.name)) : listed;
        // A policy pattern that matches nothing is a typo that would silently
        // turn a person's approval off (or on): the worker refuses to start.
        const offered = chosen.map((t) => t.name);
        for (const field of ['readOnly', 'skipApproval', 'requireApproval'] as const) {
          for (const p of cfg[field] ?? []) {
            if (!offered.some((n) => globMatches(p, n))) {
              throw new Error(`MCP server ${cfg.name}: ${field} names ${JSON.stringify(p)}, which matches none of the tools it offers here (${offered.join(', ') || 'no tools'}); fix the pattern or remove it`);
            }
          }
        }
        return { name: cfg.name, connection, mcpTools: chosen.map((t) => t.name), tools: chosen.map((t) => mcpToolDefinition(connection, t)) };
      }),
    );
    return { tools: servers.flatMap((s) => s.tools), servers: servers.map(({ tools: _t, ...s }) => s), close };
  } catch (err) {
    await close();
    throw err;
  }
}
