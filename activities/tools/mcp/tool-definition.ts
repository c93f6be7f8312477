// One MCP tool as a harness tool: its schema offered to the model under the
// harness's name, the config's policies, and a `run` that calls the server
// from the tool activity (a normal activity that heartbeats: MCP calls can be
// slow, and the heartbeat's answer is how a Stop reaches the call).
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../../../common/tool-spec.js';
import { defineTool, type ToolDefinition } from '../define-tool.js';
import { NothingChanged, ToolError } from '../tool-error.js';
import type { McpServerConfig } from './config.js';
import type { McpConnection } from './connection.js';
import { harnessToolName } from './naming.js';
import { toolPolicy } from './policy.js';
import { progressLabel, resultText } from './result.js';

/**
 * Where the call's idempotency key travels: `params._meta` of `tools/call`.
 * Stable across Temporal's retries of one call, so a server can make a write
 * happen once (a reverse-DNS prefix, as MCP asks of `_meta` keys).
 */
/** The type of a call's failure when its MCP server could not be reached: nothing was sent, so another try is safe. */
export const MCP_SERVER_UNREACHABLE = 'McpServerUnreachable';

export const IDEMPOTENCY_META_KEY = 'io.agent-harness/idempotencyKey';

export function mcpToolDefinition(conn: McpConnection, tool: Tool): ToolDefinition {
  const server = conn.server;
  const name = harnessToolName(server.prefix, tool.name);
  const { readOnly, needsApproval, idempotent } = toolPolicy(server, tool.name, tool.annotations);
  return defineTool({
    name,
    description: description(server, tool),
    parameters: parameters(tool),
    readOnly,
    // A write the server does not make idempotent (most: the _meta key is our
    // convention, not MCP's) goes through the effect protocol: a retry after a
    // timeout or a dropped connection reports the outcome unknown, never writes again.
    idempotent,
    needsApproval,
    // Never local: a local activity sends no heartbeats, and an MCP call may run for minutes.
    activity: server.timeoutMs ? { startToCloseTimeoutMs: server.timeoutMs } : {},
    enabledByDefault: server.enabledByDefault,
    origin: `mcp:${server.name}`,
    run: async (ctx, args) => {
      // The request ends before its attempt does (ctx.deadline is the attempt's
      // timeout less a margin): an answer that comes after Temporal gave up on
      // the attempt would be lost, and the write's outcome with it.
      const timeoutMs = ctx.deadline - Date.now();
      if (timeoutMs <= 0) throw new NothingChanged(ApplicationFailure.retryable(`${name}: no time left in this attempt to call the MCP server`, 'McpNoTimeLeft'));
      // Reaching the server first: a server that cannot be reached has not acted, and the call may be retried.
      try {
        await conn.ready();
      } catch (err) {
        // Typed, so a run waiting it out (waiting_for_tool) and its result say what failed.
        throw new NothingChanged(ApplicationFailure.retryable(err instanceof Error ? err.message : String(err), MCP_SERVER_UNREACHABLE));
      }
      await ctx.effect.confirm();
      let result;
      try {
        result = await conn.callTool(tool.name, args, {
          signal: ctx.signal,
          meta: { [IDEMPOTENCY_META_KEY]: ctx.idempotencyKey },
          onProgress: (p) => ctx.progress(progressLabel(p)),
          timeoutMs,
        });
      } catch (err) {
        // The Stop: the SDK has sent notifications/cancelled; the activity reports the cancellation.
        if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : err;
        // The server refused the arguments (it checks them before its tool runs): the model can fix them.
        if (err instanceof McpError && err.code === ErrorCode.InvalidParams) throw new NothingChanged(new ToolError(`${name}: ${err.message}`));
        // No answer in time, a dropped connection, a server error: for a write the
        // outcome is unknown (the protocol says so); a read is retried by Temporal.
        if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) throw new Error(`the MCP server ${server.name} did not answer within ${timeoutMs} ms`);
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
