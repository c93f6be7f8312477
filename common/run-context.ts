// The run context (`runContext`): a JSON object the caller attaches to a run
// (tenant, user, ticket) that every tool receives as `ctx.run.context` and the
// model never sees. Bounded here, in workflow-safe code: the workflow and the
// worker's input check read the same rule. It is recorded once per run (the
// input, the resolved configuration, a continue-as-new's carried state); a
// tool call's activity input carries only its key (runContextKey), and the
// worker reads the object from the run (activities/run-contexts.ts).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { z } from 'zod';
import { nestingDepth } from './json-depth.js';

/** A run context, as the caller gave it (a JSON object). */
export type RunContextValue = Record<string, unknown>;

/** The most a run context may take, encoded as JSON (UTF-8): 8 KiB. */
export const MAX_RUN_CONTEXT_BYTES = 8 * 1024;
/** How deep a run context may nest (the object itself is level 1): tenant/user/ticket records need 3 or 4. */
export const MAX_RUN_CONTEXT_DEPTH = 8;

const isObject = (v: unknown): v is RunContextValue => typeof v === 'object' && v !== null && !Array.isArray(v);


/** What is wrong with a value given as `runContext`, or null. */
export function runContextProblem(v: unknown): string | null {
  if (!isObject(v)) return `must be a JSON object like {"tenant": "acme", "user": "u-17"}, got ${Array.isArray(v) ? 'an array' : v === null ? 'null' : `a ${typeof v}`}`;
  if (nestingDepth(v, MAX_RUN_CONTEXT_DEPTH) > MAX_RUN_CONTEXT_DEPTH) return `is nested more than ${MAX_RUN_CONTEXT_DEPTH} levels deep; the limit is ${MAX_RUN_CONTEXT_DEPTH}`;
  const bytes = utf8ToBytes(JSON.stringify(v)).length;
  if (bytes > MAX_RUN_CONTEXT_BYTES) return `is ${bytes} bytes encoded as JSON; the limit is ${MAX_RUN_CONTEXT_BYTES} bytes (8 KiB): keep ids in it, not documents`;
  return null;
}

/** The input field's schema (common/input-schema.ts): the refusal names `runContext` and the limit. */
export const runContextSchema = z.custom<RunContextValue>((v) => runContextProblem(v) === null, { error: (iss) => runContextProblem(iss.input) ?? 'is not a valid run context' });

/**
 * What a tool call's activity input carries instead of the object: the run
 * context's SHA-256 (hex) over its JSON. The worker answers from a cache of
 * the contexts it knows by this key, else asks the run (its `config` query) and
 * takes the answer only if it hashes to the key: a workflow id used again by
 * another run can never hand a tool the old run's tenant.
 */
export function runContextKey(v: RunContextValue): string {
  return bytesToHex(sha256(utf8ToBytes(JSON.stringify(v))));
}
