// The environment variables whose values have a type or a set of values, and
// the words a refusal uses ("PORT must be a positive integer, got "80a""). An
// empty variable counts as unset (removed before parsing). Defaults, and the
// rules that tie several variables together, are ./config's.
import { z } from 'zod';
import { got } from '../common/schema-problem.js';
import { defaultSystemSchema, DEFINITION_CHANGE_POLICIES, LIVE_STREAMS, positive, positiveInt as positiveIntSetting, SEARCH_ATTRIBUTE_MODES, TOOLSET_CHECKS } from '../common/settings.js';

export { SEARCH_ATTRIBUTE_MODES, TOOLSET_CHECKS } from '../common/settings.js';
/**
 * LLM_PROVIDER: who calls the model at LLM_BASE_URL with LLM_API_KEY.
 * `builtin` (default): the built-in OpenAI-compatible chat-completions client;
 * `anthropic`: @ai-sdk/anthropic (Messages API, LLM_BASE_URL like
 * https://api.anthropic.com/v1); `openai-compatible`: @ai-sdk/openai-compatible.
 */
export const LLM_PROVIDERS = ['builtin', 'anthropic', 'openai-compatible'] as const;
/** LLM_PROVIDER: the built-in client, or the AI SDK provider package it names. */
export type LlmProviderName = (typeof LLM_PROVIDERS)[number];

/**
 * A variable whose value is a number, checked by the schema the same setting
 * has as an option (./settings), so the two accept the same values; the
 * refusal is the option's own, quoting the text as set
 * (`must be a positive integer, got "1d"`).
 */
const numberText = <T extends z.ZodType<number>>(schema: T) =>
  z
    .string()
    .transform((text, ctx): z.output<T> => {
      const r = schema.safeParse(/^\s*[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?\s*$/i.test(text) ? Number(text) : text);
      if (r.success) return r.data;
      ctx.addIssue({ code: 'custom', message: r.error.issues[0].message.replace(/, got .*$/s, `, got ${JSON.stringify(text)}`), input: text });
      return z.NEVER;
    })
    .optional();
const positiveInt = numberText(positiveIntSetting);

/** A TCP port: a whole number from 1 to 65535 (99999 or "abc" would otherwise reach listen() and fail there, or bind a random port). */
const PORT_RULE = 'must be a port number from 1 to 65535';
const isPort = (s: string) => /^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= 65535;
const port = z.string().refine(isPort, got(PORT_RULE)).transform(Number).optional();

/** An http: or https: URL: what the model calls' fetch takes. */
export function isHttpUrl(s: string): boolean {
  try {
    const { protocol } = new URL(s);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** In the order the variables were checked before they had a schema, so an environment with two mistakes names the same one first. */
export const envSchema = z.object({
  TEMPORAL_DEV_PORT: port,
  PORT: port,
  AGENT_TOOLSET_CHECK: z.enum(TOOLSET_CHECKS, got(`must be one of ${TOOLSET_CHECKS.join(', ')}`)).optional(),
  AGENT_RETENTION: z.enum(['on', 'off'], got('must be on or off')).optional(),
  AGENT_RETENTION_MAX_AGE_MS: positiveInt,
  AGENT_LEDGER_MAX_BYTES: positiveInt,
  AGENT_TRACE_MAX_BYTES: positiveInt,
  AGENT_MESSAGE_STORE_MAX_BYTES: positiveInt,
  AGENT_RETENTION_INTERVAL_MS: positiveInt,
  AGENT_RETENTION_LOG: z.enum(['changes', 'passes'], got('must be changes or passes')).optional(),
  AGENT_DEFINITION_CHANGE: z.enum(DEFINITION_CHANGE_POLICIES, got(`must be one of ${DEFINITION_CHANGE_POLICIES.join(', ')}`)).optional(),
  TEMPORAL_UI_PORT: port,
  // 0 passes here: ./config refuses it with the reason (ZERO_CACHE_REFUSED).
  WORKER_MAX_CACHED_WORKFLOWS: z
    .string()
    .refine((s) => Number.isInteger(Number(s)) && Number(s) >= 0, got('must be a positive integer'))
    .transform(Number)
    .optional(),
  WORKER_STICKY_TIMEOUT_MS: positiveInt,
  AGENT_HEARTBEAT_MS: positiveInt,
  AGENT_SEARCH_ATTRIBUTES: z.enum(SEARCH_ATTRIBUTE_MODES, got(`must be one of ${SEARCH_ATTRIBUTE_MODES.join(', ')}`)).optional(),
  METRICS_PORT: z
    .string()
    .refine((s) => s === 'off' || isPort(s), got(`${PORT_RULE}, or off`))
    .transform((s) => (s === 'off' ? null : Number(s)))
    .optional(),
  AGENT_DEFAULT_MAX_TURNS: positiveInt,
  AGENT_DEFAULT_BUDGET_USD: numberText(positive),
  AGENT_DEFAULT_APPROVAL_TIMEOUT_MS: positiveInt,
  AGENT_DEFAULT_SYSTEM: defaultSystemSchema.optional(),
  AGENT_MODEL_OUTAGE_MS: positiveInt,
  AGENT_TOOL_OUTAGE_MS: positiveInt,
  // The model calls' fetch takes only http and https: a typo like "htp://" would otherwise pass the start checks and fail every turn.
  LLM_BASE_URL: z.string().refine(isHttpUrl, got('must be an http: or https: URL')).optional(),
  LLM_PROVIDER: z.enum(LLM_PROVIDERS, got(`must be one of ${LLM_PROVIDERS.join(', ')}`)).optional(),
  // Each batch a worker publishes on a run's stream is a signal (a Cloud Action): a deployment nobody watches may keep to `events`.
  AGENT_LIVE_STREAM: z.enum(LIVE_STREAMS, got(`must be one of ${LIVE_STREAMS.join(', ')}`)).optional(),
  // The codec server's (npm run codec-server); checked here so it refuses at start, naming the variable.
  CODEC_PORT: port,
  // Notification webhooks (docs/operations.md, "Notifications"): a file: or other scheme would send the run's details where no receiver answers, so the worker refuses at start.
  AGENT_NOTIFY_URL: z.string().refine(isHttpUrl, got('must be an http: or https: URL')).optional(),
  AGENT_NOTIFY_SLACK_URL: z.string().refine(isHttpUrl, got('must be an http: or https: URL')).optional(),
  AGENT_OPS_URL: z.string().refine(isHttpUrl, got('must be an http: or https: URL')).optional(),
});

export type CheckedEnv = z.infer<typeof envSchema>;

// AGENT_MODEL_PRICES is parsed with the option's schema, modelPricesSchema of ./settings.
export { modelPricesSchema } from '../common/settings.js';
