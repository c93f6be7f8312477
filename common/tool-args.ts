// Checks a call's arguments against its tool's JSON schema. The workflow runs
// it before anything else happens to a call (before a person is asked to
// approve it, before the cache, before any activity), and the tool activity
// runs it again as a last guard. Deterministic: the same schema and arguments
// always give the same answer, so it is safe in workflow code.
//
// @cfworker/json-schema interprets the schema (no code generation). Ajv
// compiles it to code, which is faster per call but heavy here: every
// workflow has its own copy of its modules, and with Ajv a parked run held
// ~390 KiB more in the worker's cache and spent ~12 ms compiling per run (and
// per replay). test/tool-args.test.ts checks that both agree.
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema';
import type { ToolSpec } from './tool-spec';

// By schema object: a run's specs are the same objects call after call.
const validators = new WeakMap<object, Validator>();

// Summaries that only repeat what their more specific errors say.
const SUMMARIES = new Set(['properties', 'false', 'items', 'prefixItems', 'additionalItems']);

const where = (e: OutputUnit) => (e.instanceLocation === '#' ? 'arguments' : e.instanceLocation.slice(1));

/** Why these arguments do not fit the tool's schema, in words the model can act on; null when they fit. */
export function argumentProblem(spec: Pick<ToolSpec, 'name' | 'parameters'>, args: Record<string, unknown>): string | null {
  let validator = validators.get(spec.parameters);
  if (!validator) {
    validator = new Validator(spec.parameters as Schema, '2020-12', false);
    validators.set(spec.parameters, validator);
  }
  const { valid, errors } = validator.validate(args);
  if (valid) return null;
  const specific = errors.filter((e) => !SUMMARIES.has(e.keyword));
  const why = (specific.length ? specific : errors).map((e) => `${where(e)}: ${e.error}`).join('; ');
  return `invalid arguments for ${spec.name}: ${why} Expected: ${JSON.stringify(spec.parameters)}`;
}
