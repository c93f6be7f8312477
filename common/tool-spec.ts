// The tool interface, workflow-safe half: everything the loop needs to know
// about a tool, as plain JSON. A worker builds these from its tool modules
// (activities/tools/define-tool.ts) and MCP servers; a run records the specs of
// its tools once, at its start (the resolveConfig local activity), so a replay
// or a later worker with other tools sees exactly what the run started with.
// No I/O here: the workflow bundle imports this file.
import { MAX_MODEL_NAME_CHARS, MAX_SUB_AGENT_SYSTEM_CHARS } from './defaults.js';

/** A JSON Schema for a tool's arguments (an object schema; checked with @cfworker/json-schema). */
export interface JsonSchema {
  /** Always `object`: a tool takes named arguments. */
  type: 'object';
  /** Each argument's schema, by name. */
  properties?: Record<string, unknown>;
  /** The arguments a call must give. */
  required?: readonly string[];
  /** `false` refuses arguments not listed in `properties`; a schema checks them. */
  additionalProperties?: boolean | Record<string, unknown>;
  /** Any other JSON Schema keyword, checked as JSON Schema says. */
  [keyword: string]: unknown;
}

/**
 * When a call waits for a person. Data, not a function: the rule travels in
 * the run's history with the spec and is evaluated by the workflow, the same
 * way on every replay and on every worker.
 * - `true` / `false`: always / never.
 * - `{ argument, unlessInside }`: when the path in `argument` is not inside one
 *   of these workspace folders (the path is normalised first: `tmp/../x` is
 *   outside `tmp/`). A missing or non-string argument needs approval.
 * - `{ argument, ifMatches }`: when the argument, as a string, matches this regular expression.
 * - `{ anyOf }`: when any of the rules says so.
 */
export type ApprovalRule =
  | boolean
  | { argument: string; unlessInside: string[] }
  | { argument: string; ifMatches: string }
  | { anyOf: ApprovalRule[] };

/** How the workflow schedules the tool's activity. Every field has a default. */
export interface ToolActivityOptions {
  /**
   * Run as a local activity: in the worker that runs the loop, with no server
   * round trip. Only for fast read-only tools (local activities are
   * at-least-once and send no heartbeats). One that never needs approval is
   * also read ahead: the model call that asks for it runs it right after its
   * reply (activities/read-ahead.ts).
   */
  local?: boolean;
  /** Per attempt; default: the run's `toolTimeoutMs`. */
  startToCloseTimeoutMs?: number;
  /** Non-local tools only; default 10,000 (the tool activity heartbeats every 5 s, or half this if less). */
  heartbeatTimeoutMs?: number;
  /** Default: 5 attempts, 0.5 s doubling to 10 s. */
  retry?: { maximumAttempts?: number; initialIntervalMs?: number; backoffCoefficient?: number; maximumIntervalMs?: number };
  /**
   * What a Stop does to a running call: `wait` (default) for the tool to
   * acknowledge, so a write that already acted is reported; `try` requests
   * cancellation and moves on; `abandon` does not even ask.
   */
  cancellation?: 'wait' | 'try' | 'abandon';
}

/**
 * A tool that runs a whole child agent run instead of an activity (like
 * `research`): the child's instructions, model, tools and limits are its own,
 * its spend is its parent's.
 */
export interface SubAgentSpec {
  /** The argument that becomes the child's task. */
  taskArgument: string;
  /**
   * The child's tools, by name: a subset of what the same worker offers (a
   * name it does not offer stops the worker at start). A child may be offered
   * sub-agent tools of its own, down to MAX_SUB_AGENT_DEPTH levels, never the
   * tool itself (directly or through another). `[]`: a child with no tools.
   */
  tools: string[];
  /**
   * The child's system prompt (non-empty, at most MAX_SUB_AGENT_SYSTEM_CHARS
   * characters). Absent: the child gets what a run whose input gives none gets.
   */
  system?: string;
  /**
   * The child's model (sent as the request's `model`, unless the worker's
   * LLM_MODEL replaces every run's). Absent: its parent's. The child is priced
   * as its own model (the worker's price for it), never at its parent's prices.
   */
  model?: string;
  /**
   * The sub-agent's own limits: each child run of the tool gets these
   * (whatever the parent's budget mode), and never more budget than its
   * parent has left. An absent field takes SUB_AGENT_LIMITS (common/defaults.ts).
   */
  limits?: {
    /** The child's turn cap: a positive integer (default 6). */
    maxTurns?: number;
    /** The most one child run may spend, in USD: a positive number (default 0.05). */
    maxUsd?: number;
  };
}

/** A tool as the workflow knows it: plain JSON, recorded in the run's history at its start (its `run` stays on the worker). */
export interface ToolSpec {
  /** What the model calls it: letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  /** Shown to the model. */
  description: string;
  /** The JSON Schema of its arguments, checked by the workflow before the call runs. */
  parameters: JsonSchema;
  /** Calling it twice with the same arguments changes nothing: its result may be reused (the dedupe gate). */
  readOnly: boolean;
  /** When a call waits for a person's decision (false: never). */
  needsApproval: ApprovalRule;
  /** How its activity is scheduled; absent: the defaults. */
  activity?: ToolActivityOptions;
  /** Present for a tool that runs a child agent run instead of an activity. */
  subAgent?: SubAgentSpec;
  /** Offered to runs whose input names no tools; default true. */
  enabledByDefault?: boolean;
  /** Where it comes from, for people: `builtin`, `module:<path>`, `mcp:<server>`. */
  origin?: string;
}

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A tool whose calls a model call may run ahead (read-ahead): what the loop would run as a local activity without asking anyone. */
export function readsAhead(spec: ToolSpec): boolean {
  return spec.readOnly && spec.needsApproval === false && spec.activity?.local === true && !spec.subAgent;
}

/** Does this call wait for a person? Pure and deterministic (the workflow calls it). */
export function needsApproval(rule: ApprovalRule, args: Record<string, unknown>): boolean {
  if (typeof rule === 'boolean') return rule;
  if ('anyOf' in rule) return rule.anyOf.some((r) => needsApproval(r, args));
  const value = args[rule.argument];
  if ('ifMatches' in rule) return new RegExp(rule.ifMatches).test(typeof value === 'string' ? value : JSON.stringify(value ?? null));
  if (typeof value !== 'string') return true;
  const path = normalisePath(value);
  if (path === null) return true;
  return !rule.unlessInside.some((folder) => {
    const f = normalisePath(folder);
    return f !== null && f !== '' && path.startsWith(`${f}/`);
  });
}

/**
 * A workspace-relative path with `.`, `..` and repeated slashes resolved, in
 * pure JS (no node:path in a workflow). null when it is absolute or climbs out
 * of the workspace: such a path is never "inside" anything.
 */
export function normalisePath(p: string): string | null {
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p)) return null;
  const out: string[] = [];
  for (const part of p.split(/[/\\]+/)) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}

/** A problem with a spec (a bad name, a local write, an approval rule that cannot be evaluated), or null. */
export function specProblem(spec: ToolSpec): string | null {
  if (!TOOL_NAME.test(spec.name)) return `tool name ${JSON.stringify(spec.name)} must be 1-64 letters, digits, "_" or "-"`;
  if (typeof spec.description !== 'string' || spec.description.trim() === '') return `tool ${spec.name}: description is required`;
  if (spec.parameters?.type !== 'object') return `tool ${spec.name}: parameters must be a JSON Schema of type "object"`;
  if (spec.activity?.local && !spec.readOnly) return `tool ${spec.name}: a local tool must be readOnly (local activities may run more than once)`;
  if (spec.subAgent && spec.activity) return `tool ${spec.name}: a sub-agent tool runs a child workflow, not an activity`;
  // `!== undefined`, not truthiness: a plain object's `subAgent: null` is a broken sub-agent, not a tool without one.
  if (spec.subAgent !== undefined) {
    const sub = subAgentProblem(spec.name, spec.subAgent);
    if (sub) return `tool ${spec.name}: ${sub}`;
  }
  return ruleProblem(spec.name, spec.needsApproval);
}

const SUB_AGENT_FIELDS = ['taskArgument', 'tools', 'system', 'model', 'limits'];
// Control and format characters (a newline, NUL, a zero-width space, a bidi
// override): no provider's model is named with them, and in a header, a log
// line or a price list key they hide what the name really is.
const UNPRINTABLE = /[\p{Cc}\p{Cf}]/u;

/**
 * What is wrong with a sub-agent's spec, naming the field, or null. What a
 * spec can be checked for alone; which tools the worker offers, and how the
 * sub-agents nest, is checked with the whole toolset (activities/tools/toolset.ts).
 */
function subAgentProblem(name: string, sub: unknown): string | null {
  if (typeof sub !== 'object' || sub === null || Array.isArray(sub)) return `subAgent must be an object { taskArgument, tools, system?, model?, limits? }, got ${JSON.stringify(sub) ?? String(sub)}`;
  const s = sub as Record<string, unknown>;
  // A misspelt field (`systemPrompt`, `maxTurns` beside `limits`) would silently leave the child without it.
  const unknown = Object.keys(s).filter((k) => !SUB_AGENT_FIELDS.includes(k));
  if (unknown.length) return `subAgent has unknown field(s) ${unknown.join(', ')} (it takes ${SUB_AGENT_FIELDS.join(', ')})`;
  if (typeof s.taskArgument !== 'string' || s.taskArgument === '') return `subAgent.taskArgument must name the argument that becomes the child's task, got ${JSON.stringify(s.taskArgument) ?? String(s.taskArgument)}`;
  if (!Array.isArray(s.tools)) return `subAgent.tools must be a list of tool names ([] for none), got ${JSON.stringify(s.tools) ?? String(s.tools)}`;
  for (const t of s.tools as unknown[]) {
    if (typeof t !== 'string' || !TOOL_NAME.test(t)) return `subAgent.tools names ${JSON.stringify(t) ?? String(t)}, which is not a tool name (1-64 letters, digits, "_" or "-")`;
    if (t === name) return `subAgent.tools lists ${name} itself: a sub-agent may not start a child of its own kind (its children would nest until the budget ran out)`;
  }
  if (s.system !== undefined) {
    if (typeof s.system !== 'string' || s.system.trim() === '') return `subAgent.system must be a non-empty string (leave it out for none), got ${JSON.stringify(s.system) ?? String(s.system)}`;
    if (s.system.length > MAX_SUB_AGENT_SYSTEM_CHARS) return `subAgent.system is ${s.system.length} characters, more than the ${MAX_SUB_AGENT_SYSTEM_CHARS} allowed (MAX_SUB_AGENT_SYSTEM_CHARS)`;
  }
  if (s.model !== undefined) {
    const m = s.model;
    const shown = typeof m === 'string' && m.length > 80 ? `${JSON.stringify(m.slice(0, 80))}…` : (JSON.stringify(m) ?? String(m));
    if (typeof m !== 'string' || m.trim() === '') return `subAgent.model must be a non-empty model name (leave it out for the parent's), got ${shown}`;
    if (m.length > MAX_MODEL_NAME_CHARS) return `subAgent.model is ${m.length} characters, more than the ${MAX_MODEL_NAME_CHARS} allowed (MAX_MODEL_NAME_CHARS): ${shown}`;
    if (m.trim() !== m || UNPRINTABLE.test(m)) return `subAgent.model must be a model name without surrounding spaces, control or invisible characters, got ${shown}`;
  }
  return subAgentLimitsProblem(s.limits);
}

/** What is wrong with a sub-agent's `limits`, naming the field, or null. */
function subAgentLimitsProblem(limits: unknown): string | null {
  if (limits === undefined) return null;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) return `subAgent.limits must be an object { maxTurns?, maxUsd? }, got ${JSON.stringify(limits)}`;
  const { maxTurns, maxUsd, ...rest } = limits as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return `subAgent.limits has unknown field(s) ${unknown.join(', ')} (it takes maxTurns and maxUsd)`;
  if (maxTurns !== undefined && !(typeof maxTurns === 'number' && Number.isSafeInteger(maxTurns) && maxTurns > 0)) {
    return `subAgent.limits.maxTurns must be a positive integer, got ${JSON.stringify(maxTurns) ?? String(maxTurns)}`;
  }
  if (maxUsd !== undefined && !(typeof maxUsd === 'number' && Number.isFinite(maxUsd) && maxUsd > 0)) {
    return `subAgent.limits.maxUsd must be a positive number of USD, got ${JSON.stringify(maxUsd) ?? String(maxUsd)}`;
  }
  return null;
}

function ruleProblem(name: string, rule: ApprovalRule): string | null {
  if (typeof rule === 'boolean') return null;
  if (typeof rule !== 'object' || rule === null) return `tool ${name}: needsApproval must be true, false or a rule`;
  if ('anyOf' in rule) {
    for (const r of rule.anyOf) {
      const p = ruleProblem(name, r);
      if (p) return p;
    }
    return null;
  }
  if (typeof rule.argument !== 'string') return `tool ${name}: an approval rule names the argument it reads`;
  if ('ifMatches' in rule) {
    try {
      new RegExp(rule.ifMatches);
    } catch (err) {
      return `tool ${name}: ifMatches is not a regular expression: ${String(err)}`;
    }
    return null;
  }
  if (!Array.isArray(rule.unlessInside)) return `tool ${name}: unlessInside must be a list of folders`;
  return null;
}

/** The `tools` array of a chat-completions request. */
export function toolDefinitions(specs: readonly ToolSpec[]): OpenAiToolDefinition[] {
  return specs.map((s) => ({ type: 'function', function: { name: s.name, description: s.description, parameters: s.parameters } }));
}

export interface OpenAiToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}
