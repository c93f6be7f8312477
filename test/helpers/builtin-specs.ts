// The built-in tools' specs, as a worker offers them, for the pure-loop tests.
import { BUILTIN_TOOLS } from '../../activities/tools/builtin.js';
import { toolSpecOf } from '../../activities/tools/define-tool.js';
import type { ToolSpec } from '../../common/tool-spec.js';
import type { RunConfig } from '../../common/contract.js';
import { BUILT_IN_DEFAULTS } from '../../common/defaults.js';
import { parseInput } from '../../common/input.js';

export const BUILTIN_SPECS: readonly ToolSpec[] = BUILTIN_TOOLS.map(toolSpecOf);

/** The specs of these built-in tools, in this order. */
export function specs(...names: string[]): ToolSpec[] {
  return names.map((n) => {
    const s = BUILTIN_SPECS.find((x) => x.name === n);
    if (!s) throw new Error(`no built-in tool ${n}`);
    return s;
  });
}

/** The configuration a worker with the built-in tools and defaults resolves from `raw` (before resolveConfig adds the worker's settings). */
export function parseBuiltin(raw: unknown): RunConfig {
  return parseInput(raw, BUILT_IN_DEFAULTS, BUILTIN_SPECS);
}
