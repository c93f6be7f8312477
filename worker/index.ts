// The worker entry (`temporal-agent-harness/worker`): AgentPlugin, the
// harness as a plugin of a team's own Temporal worker (and client), and the
// types of its options. docs/plugin.md shows the three files a team writes.
// Everything else under worker/ is the standalone worker's, and internal.

export { AgentPlugin, type AgentWorkerSummary } from './agent-plugin.js';
// AgentPlugin's second constructor argument (internal: the standalone worker's words).
export type { SettingNames } from './setting-names.js';
export type { AgentPluginOptions, ModelEndpoint, ModelProviderSetting, PluginLog, PluginTracing } from './plugin-options.js';
export type { LanguageModel, LanguageModelFactory, ModelProvider } from '../activities/ai-sdk-model.js';
export type { TokenAttempt, TokenSink, TokenStream } from '../node/token-sink.js';
export { NO_TOKENS } from '../node/token-sink.js';
export { streamTokenSink, BATCH_MS as LIVE_STREAM_BATCH_MS } from '../activities/live-stream.js';
export { SearchAttributesNotReady, type WrongType } from './search-attribute-check.js';
export type { SearchAttributeTypeName } from '../common/search-attributes.js';
export { ToolsetConflict } from './tool-routing.js';
export type { LedgerConfig, RetentionConfig, SearchAttributeMode, ToolsetCheck } from '../node/config.js';
// The lists those two modes are read off (types only: nothing to call).
export type { SEARCH_ATTRIBUTE_MODES, TOOLSET_CHECKS } from '../node/env-schema.js';
export type { PayloadKey } from '../node/payload-keys.js';
export type { TraceEntry } from '../node/trace-format.js';
export type { Pricing, PromptCountMargin, RunDefaults } from '../common/contract.js';
// RunDefaults is a Pick of RunConfig: the fields it picks name these.
export type { ContextPolicy, DedupePolicy, DefinitionChangePolicy, ForkOrigin, HardBudgetConfig, RunConfig, ToolErrorPolicy, ToolName, UnknownOutcomePolicy } from '../common/contract.js';
export type { DEDUPE_POLICIES, DEFINITION_CHANGE_POLICIES, LIVE_STREAMS, NOTIFY_EVENTS, NOTIFY_FORMATS, notifyRouteSchema, notifySchema, pricingSchema, promptCountSchema, TOOL_ERROR_POLICIES } from '../common/settings.js';
export type { NotifyEvent, NotifyPlan, NotifySetting } from '../common/contract.js';
export type { DEFINITION_FIELDS, DefinitionField } from '../common/definition.js';
export type { ModelSettings, ToolChoice, TOOL_CHOICES } from '../common/model-settings.js';
// runDefaults.approvers: the policy AGENT_APPROVERS names (docs/security.md, "Signed decisions").
export type { ApproverPolicy, OtherDecision } from '../common/signed-decision.js';
export type { EffectRecord, EffectState, EffectStore, Holder, RecordedOutcome, Versioned } from '../activities/effects/record.js';
// An entry's shape is read off the config's schemas (types only: the schemas are not API).
export type { McpConfigFile, McpServerEntry, httpServer, stdioServer } from '../activities/tools/mcp/config-schema.js';
// The `tools` option takes the tools entry's definitions: their types, for a team that types its list.
export type {
  AnyToolDefinition,
  ApprovalRule,
  ArgsOf,
  EffectGuard,
  FileText,
  Flat,
  JsonSchema,
  RequiredOf,
  ResolvedPath,
  SubAgentDefinition,
  SubAgentSpec,
  ToolActivityOptions,
  ToolContext,
  ToolRunInfo,
  ToolDefinition,
  ToolRun,
  ValueOf,
  WorkspaceFiles,
  WriteHooks,
} from '../activities/tools/index.js';
export type { ToolSpec } from '../common/tool-spec.js';
