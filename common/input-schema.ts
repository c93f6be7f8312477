// The shape of a run's input (AgentInput): each field's type and range, and
// the words a refusal uses. Defaults are not here: they are the worker's
// (RunDefaults) and are filled by ./input.
import { z } from 'zod';
import { MAX_CALL_ID_CHARS } from './bounds.js';
import { got, strictObject } from './schema-problem.js';
import { modelSettingsSchema } from './model-settings.js';
import { MAX_OUTPUT_RETRIES_LIMIT, outputSchemaProblem } from './output-schema.js';
import { DEDUPE_POLICIES, pricingSchema, promptCountSchema, TOOL_ERROR_POLICIES } from './settings.js';
import { runContextSchema } from './run-context.js';

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, got(`must be one of ${values.join(' | ')}`));

/** A number that passes `ok`; `rule` is what the refusal says it must be. Integers are checked by Number.isInteger: zod's int() stops at 2^53. */
const numberWhere = (rule: string, ok: (n: number) => boolean) => z.number(got(rule)).refine(ok, got(rule));

const intBetween = (min: number, max: number) => numberWhere(`must be an integer between ${min} and ${max}`, (n) => Number.isInteger(n) && n >= min && n <= max);
const positive = numberWhere('must be a number > 0', (n) => n > 0);
const limit = (integer: boolean) => {
  const rule = `must be a positive ${integer ? 'integer' : 'number'} or null`;
  return numberWhere(rule, (n) => n > 0 && (!integer || Number.isInteger(n))).nullable().optional();
};
const string = z.string(got('must be a string'));
const flag = z.boolean(got('must be true or false')).optional();

export const MAX_TASK_CHARS = 100_000;
// A result this size is already a fifth of Temporal's 2 MiB payload limit.
export const MAX_TOOL_RESULT_CHARS_LIMIT = 400_000;
const REQUIRED_TASK = 'is required and must be a non-empty string';

// Declared with the other settings every source shares (./settings); exported here for its importers.
export { promptCountSchema };

// One path segment of letters, digits, dot, dash and underscore, not starting
// with a dot: it names a folder under the worker's workspace root and must not
// reach the harness's own bookkeeping beside it.
const WORKSPACE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;
const WORKSPACE_RULE = 'must be one folder name of letters, digits, ".", "_" or "-" (not starting with ".")';

const limits = strictObject(
  {
    maxTurns: limit(true),
    maxBudgetUsd: limit(false),
    budgetMode: oneOf(['soft', 'hard']).optional(),
    minReplyTokens: intBetween(1, 1_000_000).optional(),
    maxReplyTokens: intBetween(1, 1_000_000).optional(),
    // Validated like approvalTimeoutMs; that it comes before the timeout is ./input's check (it needs both).
    approvalEscalateAfterMs: positive.nullish(),
  },
  'must be an object like {"maxTurns": 20, "maxBudgetUsd": 0.05}',
);

const context = strictObject(
  {
    windowTokens: intBetween(1, 10_000_000).refine((n) => n >= 1000, got('must be at least 1000')),
    strategy: oneOf(['elide', 'summarize']).optional(),
    keepRecentTurns: intBetween(0, 1000).optional(),
  },
  'must be an object like {"windowTokens": 8000, "strategy": "elide"}',
);

/** The input's fields, in the order a refusal lists them. */
export const inputSchema = strictObject(
  {
    task: z.string(REQUIRED_TASK).refine((t) => t.trim() !== '', REQUIRED_TASK).max(MAX_TASK_CHARS, `must be at most ${MAX_TASK_CHARS} characters`),
    model: string.refine((m) => m.trim() !== '', 'must not be empty').optional(),
    system: string.nullish(),
    limits: limits.optional(),
    toolErrors: oneOf(TOOL_ERROR_POLICIES).optional(),
    dedupe: oneOf(DEDUPE_POLICIES).optional(),
    // Which names exist is the worker's catalogue, checked by ./input.
    tools: z.array(z.unknown(), 'must be an array of tool names').optional(),
    workspace: z.string(got(WORKSPACE_RULE)).regex(WORKSPACE_NAME, got(WORKSPACE_RULE)).optional(),
    // A partial override of the worker's prices: the same fields, each optional.
    pricing: pricingSchema.partial().optional(),
    approvalTimeoutMs: positive.nullish(),
    budgetTimeoutMs: positive.nullish(),
    modelTimeoutMs: positive.optional(),
    modelOutageMs: positive.optional(),
    toolOutageMs: positive.optional(),
    toolTimeoutMs: positive.optional(),
    maxToolResultChars: intBetween(1, MAX_TOOL_RESULT_CHARS_LIMIT).optional(),
    continueAsNewAtHistoryBytes: intBetween(1, 40 * 1024 * 1024).optional(),
    debug: flag,
    context: context.nullish(),
    resumeFrom: string.nullish(),
    // Checked by ./fork-input, which the workflow also runs before loading the source.
    forkFrom: z.unknown().optional(),
    unknownOutcomes: oneOf(['tell_model', 'ask']).optional(),
    acknowledgeDefinitionChange: flag,
    // Structured output and model settings (common/output-schema.ts, common/model-settings.ts).
    outputSchema: z.unknown().superRefine((s, ctx) => {
      const problem = outputSchemaProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }).optional(),
    maxOutputRetries: intBetween(0, MAX_OUTPUT_RETRIES_LIMIT).optional(),
    modelSettings: modelSettingsSchema.optional(),
    // Handed to the tools, never to the model (./run-context.ts).
    runContext: runContextSchema.optional(),
  },
  'must be a JSON object like {"task": "..."}',
);

export type CheckedInput = z.infer<typeof inputSchema>;

// --- forkFrom (see ./fork.ts), checked by ./fork-input in two stages: its keys, then (once a resume is ruled out) its fields.

export const FORK_FIELDS = ['run', 'runId', 'atTurn', 'message', 'transcript', 'turnCostsUsd'] as const;
const ROLES = ['system', 'user', 'assistant', 'tool'];

/** forkFrom's keys, listed in a refusal in this order. */
export const forkKeysSchema = strictObject(Object.fromEntries(FORK_FIELDS.map((k) => [k, z.unknown().optional()])), 'must be an object like {"run": "<workflow id>", "atTurn": 7}');

const nonEmpty = z.string(got('must be a non-empty string')).refine((v) => v.trim() !== '', got('must be a non-empty string'));
const ROLE_RULE = `must be a message with a role among ${ROLES.join(', ')}`;
const TOOL_CALLS_RULE = `must be tool calls like {"id", "type": "function", "function": {"name", "arguments"}}, ids of 1 to ${MAX_CALL_ID_CHARS} characters`;
// Ids bounded as a model's reply's are (workflows/next-step.ts): a forked transcript's pending call reaches the same places.
const toolCall = z.looseObject({ id: z.string().min(1).max(MAX_CALL_ID_CHARS), function: z.looseObject({ name: z.string(), arguments: z.string() }) });

/** One message in the chat wire format: the roles and fields the model call sends. A wrong role or tool message is refused as a whole. */
const chatMessage = z
  .custom<{ role: string }>((m) => typeof m === 'object' && m !== null && !Array.isArray(m) && ROLES.includes((m as { role?: unknown }).role as string), ROLE_RULE)
  .pipe(
    z.discriminatedUnion('role', [
      z.looseObject({ role: z.literal('system'), content: z.string('must be a string') }),
      z.looseObject({ role: z.literal('user'), content: z.string('must be a string') }),
      z.looseObject({
        role: z.literal('assistant'),
        content: z.string('must be a string or null').nullable(),
        // One line for the list: which part of which call is wrong matters less than what a call looks like.
        tool_calls: z.array(z.unknown(), TOOL_CALLS_RULE).refine((calls) => calls.every((c) => toolCall.safeParse(c).success), TOOL_CALLS_RULE).optional(),
      }),
      z.looseObject({ role: z.literal('tool') }).refine((m) => typeof m.tool_call_id === 'string' && typeof m.content === 'string', 'is a tool message without tool_call_id and content'),
    ]),
  );

const TRANSCRIPT_RULE = 'must be a non-empty array of chat messages';
const ATTURN_RULE = 'must be an integer >= 0 (the turns to keep)';
const TURN_COSTS_RULE = 'must be an array of numbers >= 0';

/** forkFrom's fields, in the order a refusal names them, then what they need together. */
export const forkFieldsSchema = z
  .looseObject({
    atTurn: z.number(got(ATTURN_RULE)).refine((n) => Number.isInteger(n) && n >= 0, got(ATTURN_RULE)),
    run: nonEmpty.optional(),
    runId: nonEmpty.optional(),
    message: nonEmpty.optional(),
    transcript: z.array(chatMessage, TRANSCRIPT_RULE).min(1, TRANSCRIPT_RULE).optional(),
    turnCostsUsd: z.array(z.unknown(), TURN_COSTS_RULE).refine((cs) => cs.every((c) => typeof c === 'number' && Number.isFinite(c) && c >= 0), TURN_COSTS_RULE).optional(),
  })
  .refine((f) => f.run !== undefined || f.transcript !== undefined, 'needs "run" (the source\'s workflow id) or "transcript" (an exported run\'s messages)')
  .refine((f) => f.runId === undefined || f.transcript === undefined, { message: 'names an execution to load, but "transcript" is given: use one or the other', path: ['runId'] });
