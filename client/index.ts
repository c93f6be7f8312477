// The package's client entry (`temporal-agent-harness/client`): a Temporal
// client with the harness's payload codec, and the types of what a run takes
// and answers (the contract). Everything else under client/ (the CLI, the
// codec server) is internal.
export { connectClient } from './connect.js';
export type { HarnessConfig } from '../common/config.js';
export { DEFAULT_TASK_QUEUE } from '../common/contract.js';
export type {
  AgentInput,
  AgentStatus,
  AssistantMessage,
  BudgetMode,
  BudgetRaise,
  BudgetShortfall,
  BudgetView,
  ChatMessage,
  ChildSpend,
  ContextPolicy,
  DedupePolicy,
  ExitStatus,
  ForkOrigin,
  ForkRequest,
  HardBudgetConfig,
  Interruption,
  ModelOutageView,
  OverReservationFlag,
  Pricing,
  RunConfig,
  RunResult,
  RunStatus,
  RunStatusView,
  SteerView,
  ToolCall,
  ToolErrorPolicy,
  ToolName,
  UnknownOutcomePolicy,
  Usage,
} from '../common/contract.js';
