// The tool interface: one call, one module per tool. A tool module holds what
// the workflow may know (name, schema, flags, approval rule, activity options:
// the ToolSpec, plain JSON) and what only a worker may do (`run`) side by side;
// the worker hands the workflow the spec alone (see toolSpecOf), recorded in
// the run's history at its start.
import { specProblem, type ApprovalRule, type JsonSchema, type SubAgentSpec, type ToolActivityOptions, type ToolSpec } from '../../common/tool-spec.js';
import { parametersProblem } from './schema-check.js';
import type { ArgsOf } from './args-of.js';
import type { ToolContext } from './context.js';

export type { ToolContext, ToolRunInfo } from './context.js';
export type { ArgsOf } from './args-of.js';

/** What a tool returns to the model: text (cut to the run's maxToolResultChars by the harness). */
export type ToolRun<Args = Record<string, unknown>> = (ctx: ToolContext, args: Args) => Promise<string>;

/** `P`: the parameters' schema; `run` receives arguments of the type it describes (./args-of). */
export interface ToolDefinition<P extends JsonSchema = JsonSchema> {
  /** What the model calls it: letters, digits, `_` and `-`, at most 64 characters, unique on the worker. */
  name: string;
  /** Shown to the model: what the tool does and when to use it. */
  description: string;
  /** The JSON Schema (an object schema) of the arguments; a call whose arguments do not validate never runs. */
  parameters: P;
  /** It changes nothing: its result may be reused for the same arguments (the dedupe gate), and it skips the effect protocol. */
  readOnly: boolean;
  /**
   * A write that may simply be done again (the same call twice changes nothing
   * more than once: "set X to 5", a PUT, an upsert by key). Default false:
   * a write goes through the effect protocol (claim, act, record), and an
   * attempt that finds an earlier one without a result reports the outcome as
   * unknown instead of acting again. An idempotent write skips the protocol
   * and is retried by Temporal like a read.
   */
  idempotent?: boolean;
  /** The effect in the past tense for "already deleted by run R at T (not deleted again)" (default "done"). */
  pastTense?: string;
  /** Default false. A rule (see ApprovalRule) is evaluated by the workflow on each call's arguments. */
  needsApproval?: ApprovalRule;
  /** How the workflow schedules the tool's activity (local, timeouts, retries, cancellation); every field has a default. */
  activity?: ToolActivityOptions;
  /** Offered to runs whose input names no tools; default true. */
  enabledByDefault?: boolean;
  /** Where it comes from, for people (`module:<path>`, `mcp:<server>`); set by the worker when absent. */
  origin?: string;
  /**
   * Runs in an activity, confined to the run's workspace (ctx.root). Throw
   * ToolError for an error the model should see; a write that failed before
   * it changed anything throws NothingChanged(reason), so it may be retried.
   */
  run: ToolRun<ArgsOf<P>>;
}

/** A tool that runs a child agent run: no `run`, the workflow starts the child. */
export interface SubAgentDefinition extends Omit<ToolDefinition, 'run' | 'activity' | 'idempotent' | 'pastTense'> {
  /** Which argument becomes the child's task, the child's tools and its turn cap. */
  subAgent: SubAgentSpec;
}

/** A tool a worker can offer: one that runs in an activity, or one that runs a child agent. */
export type AnyToolDefinition = ToolDefinition | SubAgentDefinition;

/**
 * Checks a tool module's definition at worker start (a bad tool stops the
 * worker with the reason, not a run). `run` is typed from `parameters`; the
 * definition returned takes any arguments, which is sound because the
 * workflow checks each call's arguments against `parameters` before the
 * activity runs (common/tool-args.ts), and the activity again.
 */
export function defineTool<const P extends JsonSchema>(def: ToolDefinition<P>): ToolDefinition {
  const problem = definitionProblem(def);
  if (problem) throw new Error(`defineTool: ${problem}`);
  return def as unknown as ToolDefinition;
}

/** A tool that runs a child agent run (like the built-in `research`); checked like defineTool. */
export function defineSubAgent(def: SubAgentDefinition): SubAgentDefinition {
  const problem = definitionProblem(def);
  if (problem) throw new Error(`defineSubAgent: ${problem}`);
  return def;
}

/**
 * What is wrong with a value offered as a tool, or null: checked by
 * defineTool, and again by the worker for every tool it is given (a plain
 * object typed as a ToolDefinition never went through defineTool).
 */
export function definitionProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return `${JSON.stringify(value) ?? String(value)} is not a tool definition (defineTool({...}))`;
  const d = value as Record<string, unknown>;
  if (typeof d.name !== 'string') return 'a tool definition needs a name (a string)';
  if (typeof d.run !== 'function' && typeof d.subAgent !== 'object') return `tool ${d.name} has no run function`;
  const def = value as AnyToolDefinition;
  const problem = specProblem(toolSpecOf(def));
  if (problem) return problem;
  const schema = parametersProblem(def.parameters);
  return schema ? `tool ${def.name}: parameters do not compile: ${schema}` : null;
}

export const isSubAgent = (def: AnyToolDefinition): def is SubAgentDefinition => 'subAgent' in def && def.subAgent !== undefined;

/** The workflow-safe part: everything but `run`, as plain JSON. */
export function toolSpecOf(def: AnyToolDefinition): ToolSpec {
  return {
    name: def.name,
    description: def.description,
    parameters: def.parameters,
    readOnly: def.readOnly,
    needsApproval: def.needsApproval ?? false,
    ...(!isSubAgent(def) && def.activity ? { activity: def.activity } : {}),
    ...(isSubAgent(def) ? { subAgent: def.subAgent } : {}),
    ...(def.enabledByDefault === false ? { enabledByDefault: false } : {}),
    ...(def.origin ? { origin: def.origin } : {}),
  };
}
