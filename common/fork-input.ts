// Validates `forkFrom` (see common/fork.ts) by its schemas (./input-schema.ts).
// Pure, like ./input: the workflow checks it before loading the source,
// parseInput checks it again so the CLI and `run --input` refuse the same inputs.
import type { z } from 'zod';
import type { ChatMessage } from './contract.js';
import type { ForkRequest } from './contract.js';
import { InputError } from './input-error.js';
import { forkFieldsSchema, forkKeysSchema } from './input-schema.js';
import { firstProblem } from './schema-problem.js';

type Obj = Record<string, unknown>;

/** Throws InputError naming the first field of `forkFrom` the schema refuses. */
function check(schema: z.ZodType, f: unknown): void {
  const checked = schema.safeParse(f);
  if (checked.success) return;
  const { field, message } = firstProblem(checked.error);
  throw new InputError(field === '' ? 'forkFrom' : `forkFrom.${field}`, message);
}

/** The input's `forkFrom`, checked; null when absent. Throws InputError naming the field. */
export function parseForkFrom(raw: Obj): ForkRequest | null {
  const f = raw.forkFrom;
  if (f === undefined || f === null) return null;
  check(forkKeysSchema, f);
  if (raw.resumeFrom !== undefined && raw.resumeFrom !== null) {
    throw new InputError('forkFrom', 'and resumeFrom cannot be used together: a fork starts a new line from a turn, a resume continues a stopped run');
  }
  check(forkFieldsSchema, f);
  // Built from the checked object itself, not the schema's copy: the transcript's messages keep every field they came with.
  const given = f as Obj;
  const req: ForkRequest = { atTurn: given.atTurn as number };
  for (const key of ['run', 'runId', 'message'] as const) if (given[key] !== undefined) req[key] = given[key] as string;
  if (given.transcript !== undefined) req.transcript = given.transcript as ChatMessage[];
  if (given.turnCostsUsd !== undefined) req.turnCostsUsd = given.turnCostsUsd as number[];
  return req;
}
