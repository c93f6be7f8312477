// The shape of a run's input (AgentInput): each field's type and range, and
// the words a refusal uses. Defaults are not here: they are the worker's
// (RunDefaults) and are filled by ./input.
import { z } from 'zod';
import { got, strictObject } from './schema-problem.js';

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, got(`must be one of ${values.join(' | ')}`));

/** A number that passes `ok`; `rule` is what the refusal says it must be. Integers are checked by Number.isInteger: zod's int() stops at 2^53. */
const numberWhere = (rule: string, ok: (n: number) => boolean) => z.number(got(rule)).refine(ok, got(rule));

const intBetween = (min: number, max: number) => numberWhere(`must be an integer between ${min} and ${max}`, (n) => Number.isInteger(n) && n >= min && n <= max);
const positive = numberWhere('must be a number > 0', (n) => n > 0);
const nonNegative = numberWhere('must be a number >= 0', (n) => n >= 0);
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
    toolErrors: oneOf(['describe', 'generic', 'fatal']).optional(),
    dedupe: oneOf(['readOnly', 'off', 'all']).optional(),
    // Which names exist is the worker's catalogue, checked by ./input.
    tools: z.array(z.unknown(), 'must be an array of tool names').optional(),
    workspace: z.string(got(WORKSPACE_RULE)).regex(WORKSPACE_NAME, got(WORKSPACE_RULE)).optional(),
    pricing: strictObject({ inputPerMTokUsd: nonNegative.optional(), outputPerMTokUsd: nonNegative.optional(), cacheReadPerMTokUsd: nonNegative.optional(), cacheWritePerMTokUsd: nonNegative.optional(), reasoningPerMTokUsd: nonNegative.optional() }, 'must be an object like {"inputPerMTokUsd": 2, "outputPerMTokUsd": 12}').optional(),
    approvalTimeoutMs: positive.nullish(),
    budgetTimeoutMs: positive.nullish(),
    modelTimeoutMs: positive.optional(),
    modelOutageMs: positive.optional(),
    toolOutageMs: positive.optional(),
    toolTimeoutMs: positive.optional(),
    maxToolResultChars: intBetween(1, MAX_TOOL_RESULT_CHARS_LIMIT).optional(),
    continueAsNewAtHistoryBytes: intBetween(1, 40 * 1024 * 1024).optional(),
    permanentToolErrors: oneOf(['stop', 'retry']).optional(),
    experimentalEmptyRejection: flag,
    debug: flag,
    context: context.nullish(),
    resumeFrom: string.nullish(),
    // Checked by ./fork-input, which the workflow also runs before loading the source.
    forkFrom: z.unknown().optional(),
    unknownOutcomes: oneOf(['tell_model', 'ask']).optional(),
    acknowledgeDefinitionChange: flag,
  },
  'must be a JSON object like {"task": "..."}',
);

export type CheckedInput = z.infer<typeof inputSchema>;
