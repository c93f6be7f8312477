// Which tools this worker offers, chosen by the deployment at worker start:
// the built-ins, plus tool modules (AGENT_TOOLS_MODULES) and MCP servers' tools
// (AGENT_MCP_CONFIG), optionally narrowed to a list of names (AGENT_TOOLS). A
// run's input then selects among these.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import type { AnyToolDefinition } from '../activities/tools/define-tool.js';
import { Toolset } from '../activities/tools/toolset.js';
import { readMcpConfig } from '../activities/tools/mcp/config.js';
import { loadMcpTools, type McpToolSource } from '../activities/tools/mcp/source.js';

export interface ToolsetConfig {
  /** Paths of modules whose default export is a tool definition or a list of them (defineTool). */
  toolModules: string[];
  /** Offer only these (null: everything the sources give). */
  toolNames: string[] | null;
  /** The MCP servers' config file (AGENT_MCP_CONFIG), or null for none. */
  mcpConfigPath?: string | null;
}

/** A worker's tools and what must be closed when the worker stops (its MCP connections). */
export interface WorkerTools {
  toolset: Toolset;
  mcp: McpToolSource | null;
  close(): Promise<void>;
}

/**
 * Everything a worker offers, MCP servers included: connects to each server
 * and lists its tools now, so a server that does not start, or a config naming
 * a tool no server has, stops the worker at start with the reason.
 */
export async function loadWorkerTools(cfg: ToolsetConfig, extra: readonly AnyToolDefinition[] = []): Promise<WorkerTools> {
  const mcp = cfg.mcpConfigPath ? await loadMcpTools(readMcpConfig(cfg.mcpConfigPath)) : null;
  try {
    const toolset = await loadToolset(cfg, [...extra, ...(mcp?.tools ?? [])]);
    return { toolset, mcp, close: async () => mcp?.close() };
  } catch (err) {
    await mcp?.close();
    throw err;
  }
}

/** Built-ins, tool modules and `extra` (MCP tools come through loadWorkerTools, which also closes them). */
async function loadToolset(cfg: ToolsetConfig, extra: readonly AnyToolDefinition[] = []): Promise<Toolset> {
  const defs: AnyToolDefinition[] = [...BUILTIN_TOOLS, ...extra];
  for (const path of cfg.toolModules) defs.push(...(await toolsOfModule(path)));
  const all = new Toolset(defs);
  return cfg.toolNames ? all.only(cfg.toolNames) : all;
}

async function toolsOfModule(path: string): Promise<AnyToolDefinition[]> {
  const mod = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown; tools?: unknown };
  const found = mod.default ?? mod.tools;
  const list = Array.isArray(found) ? found : [found];
  return list.map((t, i) => {
    if (!isDefinition(t)) throw new Error(`tool module ${path}: export ${i} is not a tool definition (export default defineTool({...}) or a list of them)`);
    return { ...t, origin: t.origin ?? `module:${path}` };
  });
}

function isDefinition(v: unknown): v is AnyToolDefinition {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Record<string, unknown>;
  return typeof d.name === 'string' && typeof d.description === 'string' && (typeof d.run === 'function' || typeof d.subAgent === 'object');
}
