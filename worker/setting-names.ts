// The words a worker's refusals use for its settings. The standalone worker
// (`npm run worker`) is configured by environment variables and names them;
// a team's worker is configured by AgentPlugin's options and Worker.create's
// own, and names those. The checks are the same code either way.
import { ZERO_CACHE_REFUSED } from '../node/config.js';

/** Internal: the words a worker's refusals use for its settings (AgentPlugin's second argument, for the standalone worker; a team passes nothing). */
export interface SettingNames {
  /** Offer only these tools. */
  only: string;
  /** The tools whose approval must carry the call's argsHash. */
  requireArgsHash: string;
  /** The approvers policy (signed decisions). */
  approvers: string;
  /** The MCP servers' config. */
  mcp: string;
  /** A tool given as a value, by its place: `AgentPlugin option tools[2]`. */
  tool(index: number): string;
  /** The search-attribute check in `check` mode, as a person would set it. */
  searchAttributesCheck: string;
  /** The tool-set check in `warn` mode, as a person would set it. */
  toolsetWarn: string;
  /** How to give a worker a queue of its own. */
  ownQueue: string;
  /** Where Worker Versioning is set. */
  versioning: string;
  /** The retention's maximum age. */
  retentionMaxAge: string;
  /** The prices of the models the worker knows (what a hard budget may run on). */
  modelPrices: string;
  /** Why a workflow cache of 0 is refused, in full. */
  zeroCache: string;
  /** The setting at an option's path (`runDefaults.maxTurns`, `modelPrices.m.inputPerMTokUsd`), as a refusal names it. */
  option(path: string): string;
}

/**
 * The options the standalone worker's environment variables become
 * (worker/env-options.ts reads them into the options):
 * one table, so a refusal of a value names the variable it came from, and a
 * team's worker names the variables it does not read (./plugin-env.ts).
 * `warnUnread: false`: a variable a team's worker commonly reads into its
 * option itself (`apiKey: process.env.LLM_API_KEY`), or one it reads (./plugin-env.ts).
 */
export const OPTION_VARIABLES: readonly { option: string; variable: string; warnUnread?: false }[] = [
  { option: 'model.baseUrl', variable: 'LLM_BASE_URL', warnUnread: false },
  { option: 'model.apiKey', variable: 'LLM_API_KEY', warnUnread: false },
  { option: 'model.model', variable: 'LLM_MODEL', warnUnread: false },
  { option: 'model.provider', variable: 'LLM_PROVIDER', warnUnread: false },
  { option: 'workspace', variable: 'AGENT_WORKSPACE', warnUnread: false },
  { option: 'stream', variable: 'AGENT_LIVE_STREAM' },
  { option: 'tools', variable: 'AGENT_TOOLS_MODULES' },
  { option: 'only', variable: 'AGENT_TOOLS' },
  { option: 'mcp', variable: 'AGENT_MCP_CONFIG' },
  { option: 'ledger', variable: 'LEDGER_DIR' },
  { option: 'ledger', variable: 'AGENT_LEDGER_URL' },
  { option: 'retention.enabled', variable: 'AGENT_RETENTION' },
  { option: 'retention.maxAgeMs', variable: 'AGENT_RETENTION_MAX_AGE_MS' },
  { option: 'retention.ledgerMaxBytes', variable: 'AGENT_LEDGER_MAX_BYTES' },
  { option: 'retention.traceMaxBytes', variable: 'AGENT_TRACE_MAX_BYTES' },
  { option: 'retention.messageStoreMaxBytes', variable: 'AGENT_MESSAGE_STORE_MAX_BYTES' },
  { option: 'retention.intervalMs', variable: 'AGENT_RETENTION_INTERVAL_MS' },
  { option: 'retention.logEveryPass', variable: 'AGENT_RETENTION_LOG' },
  { option: 'traceDir', variable: 'TRACE_DIR' },
  { option: 'messageStoreDir', variable: 'MESSAGE_STORE_DIR' },
  { option: 'runDefaults.system', variable: 'AGENT_DEFAULT_SYSTEM' },
  { option: 'runDefaults.maxTurns', variable: 'AGENT_DEFAULT_MAX_TURNS' },
  { option: 'runDefaults.maxBudgetUsd', variable: 'AGENT_DEFAULT_BUDGET_USD' },
  { option: 'runDefaults.approvalTimeoutMs', variable: 'AGENT_DEFAULT_APPROVAL_TIMEOUT_MS' },
  { option: 'runDefaults.modelOutageMs', variable: 'AGENT_MODEL_OUTAGE_MS' },
  { option: 'runDefaults.toolOutageMs', variable: 'AGENT_TOOL_OUTAGE_MS', warnUnread: false },
  { option: 'runDefaults.requireArgsHash', variable: 'AGENT_REQUIRE_ARGS_HASH', warnUnread: false },
  { option: 'runDefaults.approvers', variable: 'AGENT_APPROVERS', warnUnread: false },
  { option: 'runDefaults.definitionChange', variable: 'AGENT_DEFINITION_CHANGE', warnUnread: false },
  { option: 'runDefaults.failedRunsFailWorkflow', variable: 'AGENT_FAIL_WORKFLOW_ON_FAILED', warnUnread: false },
  { option: 'modelPrices', variable: 'AGENT_MODEL_PRICES' },
  { option: 'heartbeatEveryMs', variable: 'AGENT_HEARTBEAT_MS' },
  { option: 'searchAttributes', variable: 'AGENT_SEARCH_ATTRIBUTES' },
  { option: 'toolsetCheck', variable: 'AGENT_TOOLSET_CHECK' },
  { option: 'tracing', variable: 'OTEL_EXPORTER_OTLP_ENDPOINT' },
  { option: 'notify', variable: 'AGENT_NOTIFY_URL' },
  { option: 'notify', variable: 'AGENT_NOTIFY_SLACK_URL' },
  { option: 'notify.inboxUrl', variable: 'AGENT_OPS_URL' },
];

/** The variable an option's path came from: `modelPrices.m.promptCount` -> `AGENT_MODEL_PRICES m.promptCount`; null when none does. */
export function variableOf(path: string): string | null {
  for (const { option, variable } of OPTION_VARIABLES) {
    if (path === option) return variable;
    if (path.startsWith(`${option}.`) || path.startsWith(`${option}[`)) return `${variable} ${path.slice(option.length).replace(/^\./, '')}`;
  }
  return null;
}

/** Why a cache of 0 hurts (ZERO_CACHE_REFUSED says it for the environment). */
const ZERO_CACHE_WHY =
  'without a workflow cache, any other run\'s task evicts a run in the middle of a local activity (the fast read-only tools), which is cancelled and retried, and under steady traffic never finishes. Use at least 1';

export const ENV_NAMES: SettingNames = {
  only: 'AGENT_TOOLS',
  requireArgsHash: 'AGENT_REQUIRE_ARGS_HASH',
  approvers: 'AGENT_APPROVERS',
  mcp: 'AGENT_MCP_CONFIG',
  tool: (i) => `AGENT_TOOLS_MODULES tool ${i}`,
  searchAttributesCheck: 'AGENT_SEARCH_ATTRIBUTES=check',
  toolsetWarn: 'AGENT_TOOLSET_CHECK=warn',
  ownQueue: 'unset AGENT_TASK_QUEUE for one named after its tools, or name one',
  versioning: 'WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID',
  retentionMaxAge: 'AGENT_RETENTION_MAX_AGE_MS',
  modelPrices: 'AGENT_MODEL_PRICES',
  zeroCache: ZERO_CACHE_REFUSED,
  option: (path) => variableOf(path) ?? `AgentPlugin option ${path}`,
};

export const OPTION_NAMES: SettingNames = {
  only: 'AgentPlugin option only',
  requireArgsHash: 'AgentPlugin option runDefaults.requireArgsHash',
  approvers: 'AgentPlugin option runDefaults.approvers',
  mcp: 'AgentPlugin option mcp',
  tool: (i) => `AgentPlugin option tools[${i}]`,
  searchAttributesCheck: "AgentPlugin option searchAttributes: 'check'",
  toolsetWarn: "AgentPlugin option toolsetCheck: 'warn'",
  ownQueue: "name another in Worker.create's taskQueue, or set AgentPlugin option ownQueue: true for one named after its tools",
  versioning: "Worker.create's workerDeploymentOptions",
  retentionMaxAge: 'AgentPlugin option retention.maxAgeMs',
  modelPrices: 'AgentPlugin option modelPrices',
  zeroCache: `Worker.create's maxCachedWorkflows: 0 is refused by AgentPlugin: ${ZERO_CACHE_WHY}; stickyQueueScheduleToStartTimeout shortens how long a run waits for a dead worker.`,
  option: (path) => `AgentPlugin option ${path}`,
};
