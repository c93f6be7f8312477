// The harness's policies for one MCP tool, from the config and the server's
// annotations. The safe default: a tool is read-only only when the config
// says so or the server marks it `readOnlyHint` (and its annotations are
// trusted); anything else may change the world, so it waits for a person
// unless the config lists it in skipApproval. requireApproval wins over both.
import type { ApprovalRule } from '../../../common/tool-spec';
import type { McpServerConfig } from './config';
import { anyMatches } from './glob';

export interface McpToolAnnotations {
  readOnlyHint?: boolean;
}

export function toolPolicy(server: McpServerConfig, mcpName: string, annotations: McpToolAnnotations | undefined): { readOnly: boolean; needsApproval: ApprovalRule } {
  const readOnly = anyMatches(server.readOnly, mcpName) || (server.trustAnnotations && annotations?.readOnlyHint === true);
  const needsApproval = anyMatches(server.requireApproval, mcpName) ? true : anyMatches(server.skipApproval, mcpName) ? false : !readOnly;
  return { readOnly, needsApproval };
}
