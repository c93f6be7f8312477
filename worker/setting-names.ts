// The words a worker's refusals use for its settings. The standalone worker
// (`npm run worker`) is configured by environment variables and names them;
// a team's worker is configured by AgentPlugin's options and Worker.create's
// own, and names those. The checks are the same code either way.
import { ZERO_CACHE_REFUSED } from '../common/config.js';

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
};
