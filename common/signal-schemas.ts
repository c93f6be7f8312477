// The payloads of the run's signals and updates (./run-messages.ts) as
// schemas: each field's type and range, and the one line a refusal says.
// Every message is a whole line that names its field, because callers read
// it as is: a validator's refusal, and the reason a signal's handler traces
// (signal_ignored), which a replay writes again — so the words do not change.
// Checks that depend on the run's state (which call is awaited, the budget
// now) sit between these in the workflow, in the order a refusal names them:
// a payload is checked in the stages its handler asks, not all at once.
// Pure: bundled with the workflow.
//
// Each schema is built on first use: the SDK evaluates a workflow's modules
// again for every run it starts, and a run that is never signalled should not
// pay for building them (~3 ms of zod a run).
import { z } from 'zod';
import { firstProblem } from './schema-problem.js';

/** The payload's first problem, one line naming the field, or null when the schema accepts it. */
export function payloadProblem(schema: z.ZodType, input: unknown): string | null {
  const checked = schema.safeParse(input);
  return checked.success ? null : firstProblem(checked.error).message;
}

/** A schema built the first time it is asked for, then the same one. */
function once<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A payload that is not an object is read as one without fields: its first field says what is missing. */
const fieldsOf = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});
const shown = (v: unknown) => JSON.stringify(v ?? null);

// --- approve / reject / decide

/** Which call a decision is for. */
export const decisionSchema = once(() =>
  z.preprocess(fieldsOf, z.looseObject({ callId: z.string('callId must be a string') })),
);

/** `decide`'s decision (approve and reject carry theirs in the signal's name). */
export const verdictSchema = once(() =>
  z.enum(['approve', 'reject'], { error: (iss) => `decision must be "approve" or "reject", got ${JSON.stringify(iss.input)}` }),
);

/** A decision's argsHash, once it is given: checked for the awaited call only, after whether that call is still undecided. */
export const argsHashSchema = once(() =>
  z.string({ error: (iss) => `argsHash must be a string of 64 hex digits, got ${JSON.stringify(iss.input)}` }),
);

// --- steer

/** A steering message longer than this is refused: it goes into every later model call. */
export const MAX_STEER_CHARS = 20_000;

export const steerSchema = once(() =>
  z.looseObject(
    {
      message: z
        .string({ error: (iss) => `message must be a string, got ${shown(iss.input)}` })
        .refine((m) => m.trim() !== '', 'message must not be empty')
        .max(MAX_STEER_CHARS, { error: (iss) => `message is ${String(iss.input).length} characters long; at most ${MAX_STEER_CHARS}` }),
      by: z.string({ error: (iss) => `by must be a string, got ${JSON.stringify(iss.input)}` }).nullish(),
      interrupt: z.boolean({ error: (iss) => `interrupt must be true or false, got ${JSON.stringify(iss.input)}` }).nullish(),
    },
    'steer takes an object like {"message": "look in logs/", "by": "alice"}',
  ),
);

// --- raiseBudget

const RAISE_BY = 'by must name who raises the budget';

/** A hard budget's raise, while the budget is `currentUsd`: a raise must go higher. */
export function raiseBudgetSchema(currentUsd: number) {
  return z.preprocess(
    fieldsOf,
    z.looseObject({
      maxBudgetUsd: z
        // 1e400 in `--input` reads as Infinity, which JSON would show as null: name it.
        .number({ error: (iss) => (typeof iss.input === 'number' ? `maxBudgetUsd must be a finite number, got ${String(iss.input)}` : `maxBudgetUsd must be a number, got ${shown(iss.input)}`) })
        .refine((to) => to > currentUsd, { error: (iss) => `maxBudgetUsd must be higher than the current budget of $${currentUsd}, got ${String(iss.input)}` }),
      by: z.string(RAISE_BY).refine((by) => by.trim() !== '', RAISE_BY),
    }),
  );
}

// --- reconcile

/** Which call a reconcile is for: checked before whether that call awaits one. An array is read as an object without callId. */
export const reconcileCallSchema = once(() =>
  z.preprocess(
    (v) => (Array.isArray(v) ? {} : v),
    z.looseObject(
      { callId: z.string('reconcile: callId is required').min(1, 'reconcile: callId is required') },
      'reconcile takes {"callId": "...", "outcome": "happened" | "retry", "result": "...", "by": "..."}',
    ),
  ),
);

const NEEDS_RESULT = 'reconcile: an outcome "happened" needs result: what happened, in words the model will read';
const reconcileBy = () => z.string('reconcile: by must be a string').optional();

/** What a person says of the awaited call: it happened (and what happened), or try it again. */
export const reconcileAnswerSchema = once(() =>
  z.discriminatedUnion(
    'outcome',
    [
      z.looseObject({ outcome: z.literal('happened'), result: z.string(NEEDS_RESULT).refine((r) => r.trim() !== '', NEEDS_RESULT), by: reconcileBy() }),
      z.looseObject({ outcome: z.literal('retry'), by: reconcileBy() }),
    ],
    { error: (iss) => `reconcile: outcome must be "happened" or "retry", got ${JSON.stringify(fieldsOf(iss.input).outcome)}` },
  ),
);
