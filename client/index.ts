// The `temporal-agent-harness/client` entry: AgentClient and what its
// signatures name. Everything here is public (a change to it is a change of
// the package's API); the CLI's modules beside it are not.
import type { DataConverter } from '@temporalio/common';
import { dataConverter } from '../node/payload-codec.js';
import { checkPayloadKeys, type PayloadKey } from '../node/payload-keys.js';
import { ENCODED_FAILURES_PATH, encryptsPayloads } from '../node/codec-plugin.js';

export {
  AgentClient,
  LISTED_STATUSES,
  PARKED_ON_A_PERSON,
  type ListedAgentStatus,
  type AgentClientOptions,
  type AgentRunSummary,
  type AgentStartOptions,
  type TypedStartOptions,
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
export type { ProcessConfig, LedgerConfig, RetentionConfig, SearchAttributeMode, TemporalConnection, TemporalTls, ToolsetCheck, TracingConfig, VersioningBehaviorName, WorkerVersioning } from '../node/config.js';
export type { LLM_PROVIDERS, LlmProviderName, SEARCH_ATTRIBUTE_MODES, TOOLSET_CHECKS } from '../node/env-schema.js';
export type { VERSIONING_BEHAVIORS } from '../node/config.js';
// RunExport's format and version are read off these (types only).
export type { EXPORT_FORMAT, EXPORT_VERSION } from '../common/fork.js';
export type { DEDUPE_POLICIES, DEFINITION_CHANGE_POLICIES, NOTIFY_EVENTS, pricingSchema, promptCountSchema, TOOL_ERROR_POLICIES } from '../common/settings.js';
export type { NotifyEvent, NotifyPlan } from '../common/contract.js';
export type { DEFINITION_FIELDS, DefinitionField } from '../common/definition.js';
export type { ModelSettings, ToolChoice, TOOL_CHOICES } from '../common/model-settings.js';
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

// Payload encryption for package users, from this light entry (the worker's
// AgentPlugin.forClient gives the same codec but loads the worker entry).
export { parsePayloadKeys, PayloadKeysError, type PayloadKey } from '../node/payload-keys.js';
export type { DataConverterOptions, UndecodablePolicy } from '../node/payload-codec.js';
/** The codec server the `temporal` CLI (`--codec-endpoint`) and the Web UI call; `agent-harness codec-server` runs it. */
export { startCodecServer, DEFAULT_MAX_BODY_BYTES, type CodecServerOptions } from './codec-server.js';

/** What agentDataConverter encrypts with. */
export interface AgentDataConverterOptions {
  /**
   * The payload keys as values (the first encrypts, all decrypt; each 32
   * bytes, ids unique): the same list as the workers'. Absent: read from
   * AGENT_PAYLOAD_KEYS. null or empty: no encryption, whatever the
   * environment says.
   */
  payloadKeys?: readonly PayloadKey[] | null;
}

/**
 * The data converter the harness's workers use (large payloads gzipped, and
 * encrypted under payload keys): give it to the `Client` an AgentClient goes
 * through, or a long run's transcript and continue-as-new input (every
 * payload, with keys) are unreadable to it. Throws PayloadKeysError naming
 * the entry when a key is not 32 bytes or an id is listed twice.
 *
 * @example
 * const client = new Client({ connection, dataConverter: agentDataConverter({ payloadKeys: parsePayloadKeys(process.env.KEYS!) }) });
 */
export function agentDataConverter(options: AgentDataConverterOptions = {}): DataConverter {
  if (options.payloadKeys) checkPayloadKeys(options.payloadKeys);
  const converter = dataConverter(options.payloadKeys === undefined ? {} : { payloadKeys: options.payloadKeys });
  // Under keys, failure messages travel encrypted too (as the workers send them): the converter that reads them.
  return encryptsPayloads(options.payloadKeys) ? { ...converter, failureConverterPath: ENCODED_FAILURES_PATH } : converter;
}

/**
 * The same codec as a Client plugin (`new Client({ connection, plugins:
 * [agentCodecPlugin({ payloadKeys })] })`), added once beside a team's own
 * codecs: what AgentPlugin.forClient() gives, without loading the worker.
 */
export { codecPlugin as agentCodecPlugin } from '../node/codec-plugin.js';
