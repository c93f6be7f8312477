// The tools entry (`temporal-agent-harness/tools`): what a team needs to write
// tools of its own. A tool is a value: `run` may close over anything of the
// team's process (a database pool, an HTTP client, an in-memory map), and the
// worker is given the values (AgentPlugin's `tools` option). Everything else
// under activities/ is internal.

export { defineSubAgent, defineTool } from './define-tool.js';
export type { AnyToolDefinition, SubAgentDefinition, ToolDefinition, ToolRun } from './define-tool.js';
// ArgsOf's helpers: named by its declaration, so a consumer's compiler (and the API report) can follow it.
export type { ArgsOf, Flat, RequiredOf, ValueOf } from './args-of.js';
export type { ToolContext, ToolRunInfo, WriteHooks } from './context.js';
export { NothingChanged, ToolError } from './tool-error.js';
export { NO_ARGS, PATH_ARG, PATH_ONLY } from './parameters.js';
export { assertReadable, resolveInside } from './workspace.js';
export type { FileText, ResolvedPath, WorkspaceFiles } from './files.js';
export type { ApprovalRule, JsonSchema, SubAgentSpec, ToolActivityOptions } from '../../common/tool-spec.js';
export type { EffectGuard } from '../effects/protocol.js';
