// A tool that runs as long as asked (progress every second), for measuring
// what a running call costs and how fast a Stop reaches it: the built-in
// scan_archive lasts 3 s, shorter than one heartbeat interval.
import { defineTool, type ToolDefinition } from '../activities/tools/define-tool.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { Toolset } from '../activities/tools/toolset.js';

export const LONG_CALL = 'long_call';

/** `heartbeatTimeoutMs`: the tool's activity option (default: the harness's). */
export function longCallTool(opts: { heartbeatTimeoutMs?: number } = {}): ToolDefinition {
  return defineTool({
    name: LONG_CALL,
    description: 'Wait the given number of seconds, reporting progress each second.',
    parameters: { type: 'object', properties: { seconds: { type: 'integer', minimum: 1, maximum: 3600 } }, required: ['seconds'], additionalProperties: false },
    readOnly: true,
    enabledByDefault: false,
    // As long as the longest call it accepts: under the runs' default tool
    // timeout a call held longer is timed out and retried, and the attempts
    // overlap (the heartbeat count would then be several calls').
    activity: { startToCloseTimeoutMs: 3_660_000, ...(opts.heartbeatTimeoutMs ? { heartbeatTimeoutMs: opts.heartbeatTimeoutMs } : {}) },
    async run(ctx, { seconds }) {
      for (let s = 1; s <= seconds; s++) {
        await ctx.sleep(1000);
        ctx.progress(`${s} of ${seconds} s`);
      }
      return `waited ${seconds} s`;
    },
  });
}

/** The benchmark's tools: the built-ins and a call that lasts as long as asked. */
export const benchToolset = () => new Toolset([...BUILTIN_TOOLS, longCallTool()]);

/** The scripted provider's `script` task that calls it once, then answers. */
export const longCallTask = (seconds: number, marker = '') => `Wait. ${marker} script:[[{"name":"${LONG_CALL}","args":{"seconds":${seconds}}}]]`;
