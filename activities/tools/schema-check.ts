// Whether a tool's `parameters` is a JSON Schema the workflow can evaluate.
// The validator (@cfworker/json-schema, common/tool-args.ts) interprets a
// schema lazily, call by call: a misspelt type only ever fails, an invalid
// `pattern` or a `$ref` to nowhere throws in the middle of a run's workflow
// task. Checked once, when the worker starts, instead: the keywords whose
// value has a required shape, every regular expression, every local `$ref`.
// Pure, no I/O.

const TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];

/** Keywords whose value is one schema. */
const ONE_SCHEMA = ['additionalProperties', 'additionalItems', 'unevaluatedItems', 'unevaluatedProperties', 'contains', 'propertyNames', 'not', 'if', 'then', 'else'];
/** Keywords whose value is a non-empty list of schemas. */
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = ['properties', '$defs', 'definitions', 'dependentSchemas'];
const NUMBERS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minContains', 'maxContains'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What is wrong with this schema, naming where (`properties.path.type`), or null when the validator can evaluate it. */
export function parametersProblem(schema: unknown): string | null {
  const refs: { at: string; ref: string }[] = [];
  const anchors = new Set<string>();
  const problem = check(schema, '', refs, anchors);
  if (problem) return problem;
  for (const { at, ref } of refs) {
    if (!ref.startsWith('#')) return `${at}: $ref ${JSON.stringify(ref)} is not in the schema (only references inside it, like "#/$defs/x", are resolved)`;
    const target = ref.slice(1);
    const found = target === '' || (target.startsWith('/') ? pointer(schema, target) !== undefined : anchors.has(target));
    if (!found) return `${at}: $ref ${JSON.stringify(ref)} points to nothing in the schema`;
  }
  return null;
}

function check(s: unknown, at: string, refs: { at: string; ref: string }[], anchors: Set<string>): string | null {
  const where = (k: string) => (at === '' ? k : `${at}.${k}`);
  if (typeof s === 'boolean') return null;
  if (!isObject(s)) return `${at || 'parameters'} must be a schema (an object or a boolean), got ${JSON.stringify(s)}`;
  if ('type' in s) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const bad = types.find((t) => typeof t !== 'string' || !TYPES.includes(t));
    if (types.length === 0 || bad !== undefined) return `${where('type')}: ${JSON.stringify(bad ?? s.type)} is not a JSON Schema type (${TYPES.join(', ')})`;
  }
  if ('required' in s && !(Array.isArray(s.required) && s.required.every((r) => typeof r === 'string'))) return `${where('required')} must be a list of property names`;
  if ('enum' in s && !Array.isArray(s.enum)) return `${where('enum')} must be a list of values`;
  if ('pattern' in s) {
    const p = regexProblem(s.pattern);
    if (p) return `${where('pattern')}: ${p}`;
  }
  for (const k of NUMBERS) if (k in s && typeof s[k] !== 'number') return `${where(k)} must be a number, got ${JSON.stringify(s[k])}`;
  if ('multipleOf' in s && !(typeof s.multipleOf === 'number' && s.multipleOf > 0)) return `${where('multipleOf')} must be a number > 0, got ${JSON.stringify(s.multipleOf)}`;
  for (const k of COUNTS) {
    const n = s[k];
    if (k in s && !(typeof n === 'number' && Number.isInteger(n) && n >= 0)) return `${where(k)} must be a whole number >= 0, got ${JSON.stringify(n)}`;
  }
  if ('$ref' in s) {
    if (typeof s.$ref !== 'string') return `${where('$ref')} must be a string`;
    refs.push({ at: where('$ref'), ref: s.$ref });
  }
  if (typeof s.$anchor === 'string') anchors.add(s.$anchor);
  const sub: [string, unknown][] = [];
  for (const k of ONE_SCHEMA) if (k in s) sub.push([where(k), s[k]]);
  // `items` is one schema, or (before 2020-12) a list of them.
  if ('items' in s) {
    if (Array.isArray(s.items)) s.items.forEach((x, i) => sub.push([`${where('items')}[${i}]`, x]));
    else sub.push([where('items'), s.items]);
  }
  for (const k of SCHEMA_LISTS) {
    if (!(k in s)) continue;
    const list = s[k];
    if (!Array.isArray(list) || list.length === 0) return `${where(k)} must be a non-empty list of schemas`;
    list.forEach((x, i) => sub.push([`${where(k)}[${i}]`, x]));
  }
  for (const k of SCHEMA_MAPS) {
    if (!(k in s)) continue;
    const map = s[k];
    if (!isObject(map)) return `${where(k)} must be an object of schemas`;
    for (const [name, x] of Object.entries(map)) sub.push([`${where(k)}.${name}`, x]);
  }
  if ('patternProperties' in s) {
    const map = s.patternProperties;
    if (!isObject(map)) return `${where('patternProperties')} must be an object of schemas`;
    for (const [p, x] of Object.entries(map)) {
      const bad = regexProblem(p);
      if (bad) return `${where('patternProperties')}: ${bad}`;
      sub.push([`${where('patternProperties')}.${p}`, x]);
    }
  }
  for (const [path, x] of sub) {
    const p = check(x, path, refs, anchors);
    if (p) return p;
  }
  return null;
}

/** The validator compiles patterns with the `u` flag, so a pattern must compile with it. */
function regexProblem(p: unknown): string | null {
  if (typeof p !== 'string') return `a pattern must be a string, got ${JSON.stringify(p)}`;
  try {
    new RegExp(p, 'u');
    return null;
  } catch (err) {
    return `${JSON.stringify(p)} is not a regular expression (${err instanceof Error ? err.message : String(err)})`;
  }
}

/** The value a JSON pointer (`/$defs/x`) names inside the schema, or undefined. */
function pointer(root: unknown, p: string): unknown {
  let at: unknown = root;
  for (const raw of p.split('/').slice(1)) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(at)) at = at[Number(key)];
    else if (isObject(at)) at = at[key];
    else return undefined;
  }
  return at;
}
