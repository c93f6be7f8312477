// The `temporal-agent-harness/client` entry: AgentClient and what its
// signatures name. Everything here is public (a change to it is a change of
// the package's API); the CLI's modules beside it are not.
import type { DataConverter } from '@temporalio/common';
import { dataConverter } from '../common/payload-codec.js';

export {
  AgentClient,
  LISTED_STATUSES,
  PARKED_ON_A_PERSON,
  type ListedAgentStatus,
  type AgentClientOptions,
  type AgentRunSummary,
  type AgentStartOptions,
  type DerivedStartOptions,
  type ForkOptions,
  type ListRunsOptions,
  type ResumeOptions,
} from './agent-client.js';
export {
  AgentRunHandle,
  type AgentRunSignals,
  type AgentRunWorkflow,
  type ApproveOptions,
  type HandleContext,
  type RaiseBudgetOptions,
  type ReconcileOptions,
  type RejectOptions,
  type SteerOptions,
} from './run-handle.js';
// Signed decisions (AGENT_APPROVERS): the handle signs given a key; these sign or make keys by hand.
export { DEFAULT_SIGNATURE_TTL_MS, privateKeyOf, type SigningOptions } from './signing.js';
export { newKeyPair, publicKeyOf, signDecision, signedMessage, verifySignature, type ApproverPolicy, type OtherDecision, type SignedDecisionName, type SignedFields } from '../common/signed-decision.js';
export {
  AgentClientError,
  CannotResumeError,
  InvalidInputError,
  NoAnswerError,
  DecisionPendingError,
  NoWorkerError,
  RunAlreadyFinishedError,
  RunAlreadyStartedError,
  RunFailedError,
  RunNotFoundError,
  UpdateRefusedError,
} from './agent-errors.js';
export { CannotExportError, type ForkSpec, type RunExport } from './fork-run.js';
export { NoStreamError, StreamOffsetError, type EventsOptions } from './run-events.js';
export { isGap, isTokenEnd, isTokenText, isTraceEvent, type RunEventItem, type StreamGap, type RunStreamItem, type StreamEvent, type StreamTokenEnd, type StreamTokenText, type StreamTraceEvent, type StreamWindow } from '../common/stream-items.js';
// AgentClientOptions.optionNames: the words its refusals use (INPUT_NAMES, the default, stays internal).
export type { OptionNames } from './input-check.js';
export type { QueueWorkers, RunDescription } from './worker-check.js';
/** A Temporal client configured as the CLI's is (TEMPORAL_ADDRESS, namespace, TLS, the payload codec), from the environment. */
export { connectClient } from './connect.js';
// connectClient's parameter: every setting of the processes, and the types its fields name.
export type { HarnessConfig, LedgerConfig, RetentionConfig, SearchAttributeMode, TemporalConnection, TemporalTls, ToolsetCheck, TracingConfig, VersioningBehaviorName, WorkerVersioning } from '../common/config.js';
export type { LLM_PROVIDERS, LlmProviderName, SEARCH_ATTRIBUTE_MODES, TOOLSET_CHECKS } from '../common/env-schema.js';
export type { VERSIONING_BEHAVIORS } from '../common/config.js';
// RunExport's format and version are read off these (types only).
export type { EXPORT_FORMAT, EXPORT_VERSION } from '../common/fork.js';
export type { DEFINITION_FIELDS, DefinitionField } from '../common/definition.js';
export type { ApprovalRule, JsonSchema, SubAgentSpec, ToolActivityOptions, ToolSpec } from '../common/tool-spec.js';
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
  OutageKind,
  OverReservationFlag,
  PartialReply,
  Pricing,
  PromptCountMargin,
  RunConfig,
  RunDefaults,
  DefinitionChangePolicy,
  RunResult,
  RunStatus,
  RunStatusView,
  SteerView,
  ToolCall,
  ToolErrorPolicy,
  ToolName,
  ToolOutageView,
  UnknownOutcomePolicy,
  Usage,
} from '../common/contract.js';

/**
 * The data converter the harness's workers use (large payloads gzipped):
 * give it to the `Client` an AgentClient goes through, or a long run's
 * transcript and continue-as-new input are unreadable to it.
 *
 * @example
 * const client = new Client({ connection, dataConverter: agentDataConverter() });
 */
export function agentDataConverter(): DataConverter {
  return dataConverter();
}
