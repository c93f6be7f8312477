// Custom search attributes, so ops can find runs, e.g.
//   temporal workflow list --query 'AgentStatus="awaiting_approval"'
//   temporal workflow list --query 'AgentCostUsd > 0.01 AND AgentStatus="budget_exceeded"'
// They must be registered on the namespace (worker/dev-server/dev-server.ts and
// worker/main.ts do it at start). They are updated when the run's status
// changes (start, parked, resumed, finished), so turns and cost are as of the
// last change while a run is live, and exact once it has finished.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** `running`, `awaiting_approval` (live, parked on a person), or one of the five exits. */
export const AGENT_STATUS = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);
export const AGENT_MODEL = defineSearchAttributeKey('AgentModel', SearchAttributeType.KEYWORD);
export const AGENT_TURNS = defineSearchAttributeKey('AgentTurns', SearchAttributeType.INT);
export const AGENT_COST_USD = defineSearchAttributeKey('AgentCostUsd', SearchAttributeType.DOUBLE);
/** The tool and call a parked run waits on; unset otherwise. */
export const AGENT_AWAITING_TOOL = defineSearchAttributeKey('AgentAwaitingTool', SearchAttributeType.KEYWORD);
export const AGENT_AWAITING_CALL = defineSearchAttributeKey('AgentAwaitingCallId', SearchAttributeType.KEYWORD);
/** The parked call's argsHash (SHA-256 of its arguments' canonical JSON): what an approval must name to be bound to them. */
export const AGENT_PENDING_ARGS_HASH = defineSearchAttributeKey('AgentPendingArgsHash', SearchAttributeType.KEYWORD);
/**
 * When a parked run parked on a person (workflow time), and when its wait
 * times out (approvalTimeoutMs, or budgetTimeoutMs, after that); unset when it
 * is not parked, the expiry also when the wait has no timeout. The ops
 * server's inbox lists and filters parked runs by these without asking a
 * worker (an age filter is a visibility query).
 */
export const AGENT_AWAITING_SINCE = defineSearchAttributeKey('AgentAwaitingSince', SearchAttributeType.DATETIME);
export const AGENT_AWAITING_EXPIRES_AT = defineSearchAttributeKey('AgentAwaitingExpiresAt', SearchAttributeType.DATETIME);
/** Why a finished run stopped, in one line. */
export const AGENT_EXIT_REASON = defineSearchAttributeKey('AgentExitReason', SearchAttributeType.TEXT);
/** The type of a failure (ProviderUnauthorized, PermanentToolError, …), for alerting. */
export const AGENT_ERROR_TYPE = defineSearchAttributeKey('AgentErrorType', SearchAttributeType.KEYWORD);
/** A sub-agent's parent run id. */
export const AGENT_PARENT = defineSearchAttributeKey('AgentParent', SearchAttributeType.KEYWORD);
/** A fork's source workflow id (`forkFrom`): `AgentForkOf="<id>"` lists a run's forks. */
export const AGENT_FORK_OF = defineSearchAttributeKey('AgentForkOf', SearchAttributeType.KEYWORD);

/** A search attribute's type, as the Temporal CLI names it. */
export type SearchAttributeTypeName = 'Keyword' | 'Int' | 'Double' | 'Text' | 'Datetime';

/** Name -> type, as `temporal server start-dev --search-attribute` and the operator service take them. */
export const SEARCH_ATTRIBUTES: Record<string, SearchAttributeTypeName> = {
  AgentStatus: 'Keyword',
  AgentModel: 'Keyword',
  AgentTurns: 'Int',
  AgentCostUsd: 'Double',
  AgentAwaitingTool: 'Keyword',
  AgentAwaitingCallId: 'Keyword',
  AgentPendingArgsHash: 'Keyword',
  AgentAwaitingSince: 'Datetime',
  AgentAwaitingExpiresAt: 'Datetime',
  AgentExitReason: 'Text',
  AgentErrorType: 'Keyword',
  AgentParent: 'Keyword',
  AgentForkOf: 'Keyword',
};
