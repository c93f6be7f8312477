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
// per replay). test/unit/tool-args.test.ts checks that both agree.
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema';
import type { ToolSpec } from './tool-spec.js';

// By schema object: a run's specs are the same objects call after call.
const validators = new WeakMap<object, Validator>();

// Summaries that only repeat what their more specific errors say.
const SUMMARIES = new Set(['properties', 'false', 'items', 'prefixItems', 'additionalItems']);

const whereIn = (root: string) => (e: OutputUnit) => (e.instanceLocation === '#' ? root : e.instanceLocation.slice(1));

/** Why these arguments do not fit the tool's schema, in words the model can act on; null when they fit. */
export function argumentProblem(spec: Pick<ToolSpec, 'name' | 'parameters'>, args: Record<string, unknown>): string | null {
  const why = schemaProblem(spec.parameters, args, 'arguments');
  return why === null ? null : `invalid arguments for ${spec.name}: ${why}. Expected: ${JSON.stringify(spec.parameters)}`;
}

/**
 * Why `value` does not fit `schema` (each broken rule, `; `-joined, places
 * named from `root`), in the harness's own words; null when it fits. Also the
 * check of a structured answer (./output-schema.ts). The validator is kept per
 * schema object: a run's schemas are the same objects call after call.
 */
export function schemaProblem(schema: object, value: unknown, root: string): string | null {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema as Schema, '2020-12', false);
    validators.set(schema, validator);
  }
  const { valid, errors } = validator.validate(value);
  if (valid) return null;
  const specific = errors.filter((e) => !SUMMARIES.has(e.keyword));
  const where = whereIn(root);
  return [...new Set((specific.length ? specific : errors).map((e) => `${where(e)}: ${ruleBroken(schema, value, e)}`))].join('; ');
}

/**
 * The broken rule in the harness's own words, built from the schema and the
 * arguments, never from the library's message text: this text goes into the
 * transcript, and its length into the context-window arithmetic that decides
 * which commands the workflow issues, so a library upgrade must not change it.
 */
function ruleBroken(schema: unknown, args: unknown, e: OutputUnit): string {
  const rule = at(schema, e.keywordLocation);
  const value = at(args, e.instanceLocation);
  const parent = at(schema, e.keywordLocation.replace(/\/[^/]*$/, ''));
  switch (e.keyword) {
    case 'type':
      return `must be of type ${Array.isArray(rule) ? rule.join(' or ') : String(rule)}, got ${kindOf(value)}`;
    case 'required': {
      const missing = Array.isArray(rule) ? rule.filter((k) => typeof k === 'string' && !(isObject(value) && k in value)) : [];
      return `is missing required ${missing.length === 1 ? 'property' : 'properties'} ${missing.map((k) => JSON.stringify(k)).join(', ')}`;
    }
    case 'additionalProperties': {
      const known = isObject(parent) && isObject(parent.properties) ? Object.keys(parent.properties) : [];
      const extra = isObject(value) ? Object.keys(value).filter((k) => !known.includes(k)) : [];
      return `has unexpected ${extra.length === 1 ? 'property' : 'properties'} ${extra.map((k) => JSON.stringify(k)).join(', ')}`;
    }
    case 'enum':
      return `must be one of ${JSON.stringify(rule)}`;
    case 'const':
      return `must be ${JSON.stringify(rule)}`;
    case 'minLength':
    case 'maxLength':
      return `must be ${e.keyword === 'minLength' ? 'at least' : 'at most'} ${String(rule)} characters long`;
    case 'minimum':
    case 'maximum':
      return `must be ${e.keyword === 'minimum' ? '>=' : '<='} ${String(rule)}`;
    case 'minItems':
    case 'maxItems':
      return `must have ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${String(rule)} items`;
    case 'pattern':
      return `must match the pattern ${JSON.stringify(rule)}`;
    default:
      return `breaks the schema's "${e.keyword}" rule (${e.keywordLocation})`;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** The value at a JSON pointer written as a URI fragment ("#/properties/path/type"). */
function at(root: unknown, pointer: string): unknown {
  let v = root;
  for (const raw of pointer.replace(/^#\/?/, '').split('/').filter((p) => p !== '')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(v)) v = v[Number(key)];
    else if (isObject(v)) v = v[key];
    else return undefined;
  }
  return v;
}
