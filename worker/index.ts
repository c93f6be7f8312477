// The worker entry (`temporal-agent-harness/worker`): AgentPlugin, the
// harness as a plugin of a team's own Temporal worker (and client), and the
// types of its options. docs/plugin.md shows the three files a team writes.
// Everything else under worker/ is the standalone worker's, and internal.

export { AgentPlugin, type AgentWorkerSummary } from './agent-plugin.js';
export type { AgentPluginOptions, ModelEndpoint, ModelProviderSetting, PluginLog, PluginTracing } from './plugin-options.js';
export type { LanguageModel, LanguageModelFactory, ModelProvider } from '../activities/ai-sdk-model.js';
export type { TokenAttempt, TokenSink, TokenStream } from '../common/token-sink.js';
export { NO_TOKENS } from '../common/token-sink.js';
export { streamTokenSink, BATCH_MS as LIVE_STREAM_BATCH_MS } from '../activities/live-stream.js';
export { SearchAttributesNotReady } from './search-attribute-check.js';
export { ToolsetConflict } from './tool-routing.js';
export type { LedgerConfig, RetentionConfig, SearchAttributeMode, ToolsetCheck } from '../common/config.js';
export type { Pricing, RunDefaults } from '../common/contract.js';
// runDefaults.approvers: the policy AGENT_APPROVERS names (docs/security.md, "Signed decisions").
export type { ApproverPolicy, OtherDecision } from '../common/signed-decision.js';
export type { EffectStore } from '../activities/effects/record.js';
export type { McpConfigFile, McpServerEntry } from '../activities/tools/mcp/config-schema.js';
