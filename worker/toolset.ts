// Which tools this worker offers, chosen by the deployment at worker start:
// the built-ins, plus the team's tools (values given to AgentPlugin, or
// modules by path: AGENT_TOOLS_MODULES) and MCP servers' tools
// (AGENT_MCP_CONFIG), optionally narrowed to a list of names (AGENT_TOOLS). A
// run's input then selects among these.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { definitionProblem, type AnyToolDefinition } from '../activities/tools/define-tool.js';
import { Toolset } from '../activities/tools/toolset.js';
import { readMcpConfig } from '../activities/tools/mcp/config.js';
import { loadMcpTools, type McpToolSource } from '../activities/tools/mcp/source.js';
import { ENV_NAMES, type SettingNames } from './setting-names.js';

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
  const modules = await toolsOfModules(cfg.toolModules);
  const mcp = cfg.mcpConfigPath ? await loadMcpTools(readMcpConfig(cfg.mcpConfigPath)) : null;
  try {
    const toolset = buildToolset({ tools: [...extra, ...modules], mcpTools: mcp?.tools ?? [], only: cfg.toolNames });
    return { toolset, mcp, close: async () => mcp?.close() };
  } catch (err) {
    await mcp?.close();
    throw err;
  }
}

/** The tools of these modules (AGENT_TOOLS_MODULES), each with its module as its origin. */
export async function toolsOfModules(paths: readonly string[]): Promise<AnyToolDefinition[]> {
  const out: AnyToolDefinition[] = [];
  for (const path of paths) out.push(...(await toolsOfModule(path)));
  return out;
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

const BUILTIN_NAMES = new Set(BUILTIN_TOOLS.map((t) => t.name));

/**
 * The built-ins, then `tools`, then the MCP servers' tools, narrowed to
 * `only`. Each of `tools` is checked as defineTool checks it (a plain object
 * never went through it): a bad name or schema, a name a built-in or another
 * tool has, is an error naming the tool by where it was given.
 */
export function buildToolset(opts: { tools: readonly AnyToolDefinition[]; mcpTools?: readonly AnyToolDefinition[]; only: readonly string[] | null; names?: SettingNames; builtins?: boolean }): Toolset {
  const names = opts.names ?? ENV_NAMES;
  const where = (def: AnyToolDefinition, i: number) => (def.origin?.startsWith('module:') ? `tool module ${def.origin.slice('module:'.length)}` : names.tool(i));
  const seen = new Map<string, string>();
  opts.tools.forEach((def, i) => {
    const problem = definitionProblem(def);
    if (problem) throw new Error(`${where(def, i)}: ${problem}`);
    if (BUILTIN_NAMES.has(def.name)) throw new Error(`${where(def, i)}: tool ${def.name} has the name of a built-in tool; rename it`);
    const prior = seen.get(def.name);
    if (prior) throw new Error(`two tools are named ${def.name} (${prior} and ${where(def, i)}); rename one`);
    seen.set(def.name, where(def, i));
  });
  // The built-ins (delete_file among them) only when asked for (AgentPlugin's builtinTools, AGENT_BUILTIN_TOOLS): a team's worker offers its own tools.
  const all = new Toolset([...(opts.builtins !== false ? BUILTIN_TOOLS : []), ...opts.tools, ...(opts.mcpTools ?? [])]);
  return opts.only ? all.only(opts.only, names.only) : all;
}
