// The harness's policies for one MCP tool, from the config and the server's
// annotations. The safe default: a tool is read-only only when the config
// says so or the server marks it `readOnlyHint` (and its annotations are
// trusted); anything else may change the world, so it waits for a person
// unless the config lists it in skipApproval. requireApproval wins over both.
// A write is idempotent (retried like a read, outside the effect protocol)
// only when the config lists it in `idempotent` or the server marks it
// `idempotentHint` and its annotations are trusted.
import type { ApprovalRule } from '../../../common/tool-spec.js';
import type { McpServerConfig } from './config.js';
import { anyMatches } from './glob.js';

export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
}

export function toolPolicy(
  server: McpServerConfig,
  mcpName: string,
  annotations: McpToolAnnotations | undefined,
): { readOnly: boolean; needsApproval: ApprovalRule; idempotent: boolean } {
  const readOnly = anyMatches(server.readOnly, mcpName) || (server.trustAnnotations && annotations?.readOnlyHint === true);
  const needsApproval = anyMatches(server.requireApproval, mcpName) ? true : anyMatches(server.skipApproval, mcpName) ? false : !readOnly;
  const idempotent = !readOnly && (anyMatches(server.idempotent, mcpName) || (server.trustAnnotations && annotations?.idempotentHint === true));
  return { readOnly, needsApproval, idempotent };
}
