// Each setting that more than one source takes (a run's input, AgentPlugin's
// options, the standalone worker's environment) declared once, as a zod
// schema: the sources parse their values through these, and the TypeScript
// types are derived from them (common/contract.ts), so a type, a check and an
// enum can no longer drift apart (AGENT_MODEL_PRICES took `promptCount` while
// the plugin's own check refused it). Only zod here: the workflow bundle may
// import this file.
import { z } from 'zod';
import { got, strictObject } from './schema-problem.js';

/** How a tool error reaches the model (`toolErrors`). */
export const TOOL_ERROR_POLICIES = ['describe', 'generic', 'fatal'] as const;
/** Which repeated tool calls are answered from the run's cache (`dedupe`). */
export const DEDUPE_POLICIES = ['readOnly', 'off', 'all'] as const;
/** Whether a continuation whose definition moved under it is refused (`definitionChange`, AGENT_DEFINITION_CHANGE). */
export const DEFINITION_CHANGE_POLICIES = ['refuse', 'allow'] as const;
/** A queue polled by workers offering other tools: stop (`refuse`) or only say so (`toolsetCheck`, AGENT_TOOLSET_CHECK). */
export const TOOLSET_CHECKS = ['refuse', 'warn'] as const;
/** Create the namespace's missing search attributes, or only check (`searchAttributes`, AGENT_SEARCH_ATTRIBUTES). */
export const SEARCH_ATTRIBUTE_MODES = ['create', 'check'] as const;
/** What a run's live stream carries (`stream`, AGENT_LIVE_STREAM). */
export const LIVE_STREAMS = ['full', 'events'] as const;

/** One of `values`; the refusal lists them and quotes the value given. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, got(`must be one of ${values.map((v) => `'${v}'`).join(', ')}`));

/** A number that passes `ok`; `rule` is what the refusal says it must be. Integers are checked by Number.isInteger: zod's int() stops at 2^53. */
export const numberWhere = (rule: string, ok: (n: number) => boolean) => z.number(got(rule)).refine(ok, got(rule));
export const positiveInt = numberWhere('must be a positive integer', (n) => Number.isInteger(n) && n > 0);
export const positive = numberWhere('must be a number > 0', (n) => Number.isFinite(n) && n > 0);
export const nonNegative = numberWhere('must be a number >= 0', (n) => Number.isFinite(n) && n >= 0);
const intBetween = (min: number, max: number) => numberWhere(`must be an integer between ${min} and ${max}`, (n) => Number.isInteger(n) && n >= min && n <= max);

/** A hard budget's margin on its own prompt count: held tokens = ceil(counted × factor) + overheadTokens. */
export const promptCountSchema = strictObject(
  {
    /** At least 1. */
    factor: numberWhere('must be a number between 1 and 100', (n) => n >= 1 && n <= 100),
    /** A whole number, at least 0: what the provider adds to every request (a tool-use system prompt, a chat template). */
    overheadTokens: intBetween(0, 1_000_000),
  },
  'must be an object like {"factor": 3, "overheadTokens": 600}',
);

/** A model's prices in USD per million tokens: `modelPrices` (AGENT_MODEL_PRICES) and `runDefaults.pricing`. */
export const pricingSchema = strictObject(
  {
    /** Input (prompt) tokens. */
    inputPerMTokUsd: nonNegative,
    /** Output (completion) tokens. */
    outputPerMTokUsd: nonNegative,
    /** Cache-read input tokens; absent: inputPerMTokUsd. */
    cacheReadPerMTokUsd: nonNegative.optional(),
    /** Cache-write input tokens; absent: inputPerMTokUsd. */
    cacheWritePerMTokUsd: nonNegative.optional(),
    /** Reasoning output tokens; absent: outputPerMTokUsd. */
    reasoningPerMTokUsd: nonNegative.optional(),
    /**
     * How a hard budget holds a prompt it counted with o200k_base before
     * sending it, for a model whose own tokenizer may count more: the count ×
     * `factor` + `overheadTokens`. Absent: exact for models that tokenize with
     * o200k_base (OpenAI's gpt-4o, gpt-4.1, gpt-5, o-series, the scripted
     * provider's), else 3 × + 600 (measured in reports/tokenizer-margin.md).
     */
    promptCount: promptCountSchema.optional(),
  },
  'must be an object like {"inputPerMTokUsd": 2, "outputPerMTokUsd": 12}',
);

/** The most a worker's default system prompt may hold (the input's task has the same bound). */
export const MAX_DEFAULT_SYSTEM_CHARS = 100_000;
/** The system prompt of a run whose input gives none (`runDefaults.system`, AGENT_DEFAULT_SYSTEM). */
export const defaultSystemSchema = z
  .string(got('must be a string'))
  .refine((s) => s.trim() !== '', 'must not be empty (leave it unset for runs without a system prompt)')
  .refine((s) => s.length <= MAX_DEFAULT_SYSTEM_CHARS, `must be at most ${MAX_DEFAULT_SYSTEM_CHARS} characters`);

/** Model name → its prices: what a hard budget may run on (`modelPrices`, AGENT_MODEL_PRICES). */
export const modelPricesSchema = z.record(z.string(), pricingSchema, got('must map model names to prices, like {"gpt-4o-mini": {"inputPerMTokUsd": 0.15, "outputPerMTokUsd": 0.6}}'));

// --- notifications (AgentPlugin `notify`; AGENT_NOTIFY_URL, AGENT_NOTIFY_SLACK_URL, AGENT_OPS_URL)

/** What a run notifies about: it parked on a person, or an approval passed limits.approvalEscalateAfterMs. */
export const NOTIFY_EVENTS = ['approval_required', 'budget_required', 'reconciliation_required', 'approval_escalated'] as const;
/** How a route's body is shaped: the contract's JSON, or Slack's incoming-webhook `{text, blocks}`. */
export const NOTIFY_FORMATS = ['json', 'slack'] as const;

/** An http: or https: URL (URL is a global in the workflow sandbox too: this file stays workflow-safe). */
const httpUrl = z.string(got('must be an http: or https: URL')).refine((s) => {
  try {
    const { protocol } = new URL(s);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}, got('must be an http: or https: URL'));

/** One webhook: where, in which shape, and for which events and tools (absent: all). */
export const notifyRouteSchema = strictObject(
  {
    url: httpUrl,
    format: oneOf(NOTIFY_FORMATS).optional(),
    events: z.array(oneOf(NOTIFY_EVENTS), got('must be a list of events')).optional(),
    tools: z.array(z.string(got('must be a string')), got('must be a list of tool names')).optional(),
  },
  'must be an object like {"url": "https://hooks.example/agent", "format": "json"}',
  'is not a route setting',
);

/** Where runs parked on a person are announced (AgentPlugin `notify`). */
export const notifySchema = strictObject(
  {
    routes: z.array(notifyRouteSchema, got('must be a list of routes like {"url": "https://..."}')),
    /** The inbox a notification links to (AGENT_OPS_URL). */
    inboxUrl: httpUrl.optional(),
  },
  'must be an object like {"routes": [{"url": "https://hooks.example/agent"}]}',
  'is not a notify setting',
);
