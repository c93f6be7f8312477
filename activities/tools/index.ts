// The package's tools entry (`temporal-agent-harness/tools`): how a team
// writes a tool of its own. Tool definitions are values: `run` may close over
// anything of the team's process. Everything else under activities/ is internal.
export {
  defineTool,
  defineSubAgent,
  type ToolDefinition,
  type SubAgentDefinition,
  type AnyToolDefinition,
  type ToolRun,
  type ToolContext,
  type ArgsOf,
} from './define-tool.js';
export { ToolError, NothingChanged } from './tool-error.js';
export type { WriteHooks } from './context.js';
export type { EffectGuard } from '../effects/protocol.js';
export type { JsonSchema, ApprovalRule, ToolActivityOptions, SubAgentSpec } from '../../common/tool-spec.js';
