// A tool call's arguments, read the one way the loop and the model
// activity's read-ahead both use: a known, enabled tool; arguments within the
// size and depth limits, valid JSON, an object, fitting the tool's schema.
// No Temporal import, no I/O: workflow code runs it.
import { argumentProblem } from './tool-args.js';
import { nestingDepth } from './json-depth.js';
import { canonicalJson, cacheKeyDigest } from './args-hash.js';
import type { ToolSpec } from './tool-spec.js';
import type { ToolCall, ToolName } from './contract.js';

export const MAX_ARGUMENT_CHARS = 16_384;
/** How deep a call's arguments may nest (the arguments object itself is level 1). */
export const MAX_ARGUMENT_DEPTH = 64;

export type ParsedCall =
  | { ok: true; toolName: ToolName; spec: ToolSpec; args: Record<string, unknown> }
  | { ok: false; toolName: string; error: string };

/**
 * Checks what the workflow can check without I/O: a known, enabled tool and
 * arguments that fit its schema. Runs before approval, cache or activity: a
 * person is never asked about a call that could not run.
 */
export function parseCall(call: ToolCall, enabled: readonly ToolSpec[]): ParsedCall {
  const name = call.function.name;
  const spec = enabled.find((s) => s.name === name);
  if (!spec) {
    return { ok: false, toolName: name, error: `unknown tool ${JSON.stringify(name.slice(0, 100))}. Available tools: ${enabled.map((s) => s.name).join(', ')}.` };
  }
  // Huge arguments are refused before they are parsed, traced or sent to an activity.
  if (call.function.arguments.length > MAX_ARGUMENT_CHARS) {
    return {
      ok: false,
      toolName: name,
      error: `the arguments of ${name} are ${call.function.arguments.length} characters long; the limit is ${MAX_ARGUMENT_CHARS}.`,
    };
  }
  let args: unknown;
  try {
    args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch {
    // Our own words, not the JSON parser's: its text differs between Node versions, and this goes into the transcript.
    return { ok: false, toolName: name, error: `the arguments of ${name} are not valid JSON; send one JSON object, like {"path": "errors.log"}.` };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { ok: false, toolName: name, error: `the arguments of ${name} must be a JSON object.` };
  }
  // Before anything walks them (the schema check, hashes, the trace, the
  // payload converter's JSON.stringify, which overflows the stack a few
  // thousand levels down): 10 KB of brackets nest 5,000 deep.
  const depth = nestingDepth(args, MAX_ARGUMENT_DEPTH);
  if (depth > MAX_ARGUMENT_DEPTH) {
    return { ok: false, toolName: name, error: `the arguments of ${name} are nested more than ${MAX_ARGUMENT_DEPTH} levels deep; the limit is ${MAX_ARGUMENT_DEPTH}.` };
  }
  const problem = argumentProblem(spec, args as Record<string, unknown>);
  if (problem) return { ok: false, toolName: name, error: problem };
  return { ok: true, toolName: name, spec, args: args as Record<string, unknown> };
}

/** Same tool, same arguments (key order ignored) -> same key. */
export function cacheKey(toolName: string, args: unknown): string {
  return `${toolName}:${canonicalJson(args)}`;
}

/** What a model call is told of the dedupe cache's keys (activities/read-ahead.ts): a short digest of each, not the keys. */
export const cachedDigest = (toolName: string, args: unknown): string => cacheKeyDigest(cacheKey(toolName, args));
