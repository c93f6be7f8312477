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
export { INPUT_NAMES, type OptionNames } from './input-check.js';
export type { QueueWorkers, RunDescription } from './worker-check.js';
/** A Temporal client configured as the CLI's is (TEMPORAL_ADDRESS, namespace, TLS, the payload codec), from the environment. */
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
  OutageKind,
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
