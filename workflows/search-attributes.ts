// Custom search attributes, so ops can find runs with
// `temporal workflow list --query 'AgentStatus="interrupted"'`. They must be
// registered on the namespace (client/dev-server.ts and worker/main.ts do it).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const AGENT_STATUS = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);
export const AGENT_MODEL = defineSearchAttributeKey('AgentModel', SearchAttributeType.KEYWORD);

/** Name -> type, as `temporal server start-dev --search-attribute` and the operator service take them. */
export const SEARCH_ATTRIBUTES: Record<string, 'Keyword'> = {
  AgentStatus: 'Keyword',
  AgentModel: 'Keyword',
};
