// Model settings (input `modelSettings`): what a run asks of the model on
// every turn besides its prompt, each checked here with a refusal naming it,
// and sent to the provider as given: by the built-in provider as chat
// completions' fields, by an AI SDK provider as the language model's call
// options of the same names (activities/ai-sdk-model.ts). Workflow-safe.
import { z } from 'zod';
import { utf8Length } from './bounds.js';
import { got, strictObject } from './schema-problem.js';

/** The most providerOptions may take, as UTF-8 JSON: it travels with every model call. */
export const MAX_PROVIDER_OPTIONS_BYTES = 8 * 1024;
/** Stop sequences a run may give (OpenAI takes 4, Anthropic more), each at most MAX_STOP_SEQUENCE_CHARS. */
export const MAX_STOP_SEQUENCES = 16;
export const MAX_STOP_SEQUENCE_CHARS = 256;

/** What the model is asked to do with the tools: `auto` (the provider's default), `required` (a call every turn), `none`. */
export const TOOL_CHOICES = ['auto', 'required', 'none'] as const;
/** One of {@link TOOL_CHOICES}. */
export type ToolChoice = (typeof TOOL_CHOICES)[number];

/**
 * The settings a run sends with each turn's model call. Every field is
 * optional: one left out is not sent (the provider's default holds).
 */
export interface ModelSettings {
  /** Sampling temperature, 0 to 2. */
  temperature?: number;
  /** Nucleus sampling, above 0 and at most 1. */
  topP?: number;
  /** The longest reply, in tokens (under a hard budget the lower of this and what the budget pays for is sent). */
  maxOutputTokens?: number;
  /** Text at which the provider stops the reply. */
  stopSequences?: string[];
  /** For providers that sample deterministically given a seed (an integer). */
  seed?: number;
  /** `auto`, `required` or `none`. */
  toolChoice?: ToolChoice;
  /**
   * Options of one provider, by its name, passed on as given: the AI SDK's
   * `providerOptions` (`{"anthropic": {"thinking": {...}}}`); the built-in
   * provider adds the fields of `openaiCompatible` to its request body.
   */
  providerOptions?: Record<string, Record<string, unknown>>;
}

const numberWhere = (rule: string, ok: (n: number) => boolean) => z.number(got(rule)).refine(ok, got(rule));
const PROVIDER_OPTIONS_RULE = 'must be an object of objects, by provider name, like {"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 1024}}}';

/** The input's `modelSettings`: each field's type and range, refusals naming it. */
export const modelSettingsSchema = strictObject(
  {
    temperature: numberWhere('must be a number between 0 and 2', (n) => n >= 0 && n <= 2).optional(),
    topP: numberWhere('must be a number above 0 and at most 1', (n) => n > 0 && n <= 1).optional(),
    maxOutputTokens: numberWhere('must be an integer between 1 and 1000000', (n) => Number.isInteger(n) && n >= 1 && n <= 1_000_000).optional(),
    stopSequences: z
      .array(z.string(got(`must be strings of 1 to ${MAX_STOP_SEQUENCE_CHARS} characters`)).min(1, `must be strings of 1 to ${MAX_STOP_SEQUENCE_CHARS} characters`).max(MAX_STOP_SEQUENCE_CHARS, `must be strings of 1 to ${MAX_STOP_SEQUENCE_CHARS} characters`), got('must be an array of strings'))
      .max(MAX_STOP_SEQUENCES, `must hold at most ${MAX_STOP_SEQUENCES} sequences`)
      .optional(),
    seed: numberWhere('must be an integer', (n) => Number.isSafeInteger(n)).optional(),
    toolChoice: z.enum(TOOL_CHOICES, got(`must be one of ${TOOL_CHOICES.join(' | ')}`)).optional(),
    providerOptions: z
      .record(z.string(), z.record(z.string(), z.unknown(), PROVIDER_OPTIONS_RULE), PROVIDER_OPTIONS_RULE)
      .refine((o) => utf8Length(JSON.stringify(o)) <= MAX_PROVIDER_OPTIONS_BYTES, {
        error: (iss) => `is ${utf8Length(JSON.stringify(iss.input))} bytes as JSON; the limit is ${MAX_PROVIDER_OPTIONS_BYTES} (it travels with every model call)`,
      })
      .optional(),
  },
  'must be an object like {"temperature": 0.2, "toolChoice": "auto"}',
);

/** The settings as a run records them: only the fields given, in the order above; null when none is. */
export function recordedSettings(given: z.infer<typeof modelSettingsSchema> | undefined): ModelSettings | null {
  if (!given) return null;
  const out: ModelSettings = {};
  for (const k of ['temperature', 'topP', 'maxOutputTokens', 'stopSequences', 'seed', 'toolChoice', 'providerOptions'] as const) {
    if (given[k] !== undefined) (out as Record<string, unknown>)[k] = given[k];
  }
  return Object.keys(out).length ? out : null;
}
