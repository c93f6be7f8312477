// The workflow bundle's entry point: only deterministic code is reachable from here.
export { agentRun } from './agent-run.js';
/** What a run takes and answers, for a team's workflow that runs `agentRun` as a child (types only: nothing more enters the bundle). */
export type { AgentInput, RunResult, RunStatusView } from '../common/contract.js';
// The types those three name, so a team's code can write them (types only).
export type {
  AgentStatus,
  BudgetMode,
  BudgetRaise,
  BudgetShortfall,
  BudgetView,
  ChatMessage,
  ChildSpend,
  DedupePolicy,
  ExitStatus,
  ForkOrigin,
  ForkRequest,
  Interruption,
  ModelOutageView,
  OverReservationFlag,
  PartialReply,
  Pricing,
  PromptCountMargin,
  RunStatus,
  SteerView,
  ToolCall,
  ToolErrorPolicy,
  ToolName,
  ToolOutageView,
  UnknownOutcomePolicy,
  Usage,
} from '../common/contract.js';
// DefinitionField (a result's definitionChanged) is read off this list (types only).
export type { DEDUPE_POLICIES, pricingSchema, promptCountSchema, TOOL_ERROR_POLICIES } from '../common/settings.js';
export type { DEFINITION_FIELDS, DefinitionField } from '../common/definition.js';
export type { ModelSettings, ToolChoice, TOOL_CHOICES } from '../common/model-settings.js';
