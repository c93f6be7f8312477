// One MCP tool as a harness tool: its schema offered to the model under the
// harness's name, the config's policies, and a `run` that calls the server
// from the tool activity (a normal activity that heartbeats: MCP calls can be
// slow, and the heartbeat's answer is how a Stop reaches the call).
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../../../common/tool-spec';
import { defineTool, type ToolDefinition } from '../define-tool';
import { ToolError } from '../tool-error';
import type { McpServerConfig } from './config';
import type { McpConnection } from './connection';
import { harnessToolName } from './naming';
import { toolPolicy } from './policy';
import { progressLabel, resultText } from './result';

/**
 * Where the call's idempotency key travels: `params._meta` of `tools/call`.
 * Stable across Temporal's retries of one call, so a server can make a write
 * happen once (a reverse-DNS prefix, as MCP asks of `_meta` keys).
 */
export const IDEMPOTENCY_META_KEY = 'io.agent-harness/idempotencyKey';

/** The MCP request's own timeout when the config sets none: the activity's startToClose bounds the call anyway. */
const DEFAULT_REQUEST_TIMEOUT_MS = 10 * 60_000;

export function mcpToolDefinition(conn: McpConnection, tool: Tool): ToolDefinition {
  const server = conn.server;
  const name = harnessToolName(server.prefix, tool.name);
  const { readOnly, needsApproval } = toolPolicy(server, tool.name, tool.annotations);
  return defineTool({
    name,
    description: description(server, tool),
    parameters: parameters(tool),
    readOnly,
    needsApproval,
    // Never local: a local activity sends no heartbeats, and an MCP call may run for minutes.
    activity: server.timeoutMs ? { startToCloseTimeoutMs: server.timeoutMs } : {},
    enabledByDefault: server.enabledByDefault,
    origin: `mcp:${server.name}`,
    run: async (ctx, args) => {
      let result;
      try {
        result = await conn.callTool(tool.name, args, {
          signal: ctx.signal,
          meta: { [IDEMPOTENCY_META_KEY]: ctx.idempotencyKey },
          onProgress: (p) => ctx.progress(progressLabel(p)),
          timeoutMs: server.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
        });
      } catch (err) {
        // The Stop: the SDK has sent notifications/cancelled; the activity reports the cancellation.
        if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : err;
        // The server refused the arguments: the model can fix them.
        if (err instanceof McpError && err.code === ErrorCode.InvalidParams) throw new ToolError(`${name}: ${err.message}`);
        // Anything else is the transport or the server failing: thrown, so Temporal retries (the key makes that safe).
        throw err;
      }
      const text = resultText(result);
      if (result.isError) throw new ToolError(text.trim() === '' ? `${name} failed (the MCP server gave no details)` : text);
      return text;
    },
  });
}

function description(server: McpServerConfig, tool: Tool): string {
  const d = tool.description?.trim() || tool.annotations?.title || tool.title || tool.name;
  return `${d} (MCP server ${server.name})`;
}

/** The tool's input schema, minus `$schema` (the harness validates with its own draft). */
function parameters(tool: Tool): JsonSchema {
  const { $schema: _ignored, ...schema } = tool.inputSchema as JsonSchema & { $schema?: unknown };
  return { ...schema, type: 'object' };
}
