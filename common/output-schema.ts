// Structured output (input `outputSchema`): the checks on the schema a caller
// gives (bounded, local references only, no reference loop, no pattern that
// backtracks without end), and the check of a final answer against it, with
// the validator the workflow bundle already carries for tool arguments
// (@cfworker/json-schema, through ./tool-args.ts). Pure and deterministic: the
// workflow runs checkAnswer on every final answer, the input check runs
// outputSchemaProblem at start.
import { utf8Length } from './bounds.js';
import { nestingDepth } from './json-depth.js';
import { schemaProblem } from './tool-args.js';

/** The most an output schema may take, as UTF-8 JSON: it travels in every model call's input. */
export const MAX_OUTPUT_SCHEMA_BYTES = 16 * 1024;
/** How deep an output schema may nest (the schema object itself is level 1). */
export const MAX_OUTPUT_SCHEMA_DEPTH = 32;
/** Misses allowed before the run ends `failed`, InvalidOutput (input `maxOutputRetries`). */
export const DEFAULT_MAX_OUTPUT_RETRIES = 2;
/** The most `maxOutputRetries` may be: each miss is a paid turn. */
export const MAX_OUTPUT_RETRIES_LIMIT = 10;
/**
 * The longest final answer checked against the schema, in characters: the
 * result carries it twice (the text in `output`, the value in
 * `structuredOutput`) and must stay far from Temporal's 2 MiB payload limit.
 * A longer answer is a miss the model is told about.
 */
export const MAX_STRUCTURED_ANSWER_CHARS = 256 * 1024;
/** How deep a structured answer may nest: the validator and every JSON encoding after it recurse. */
export const MAX_STRUCTURED_ANSWER_DEPTH = 64;

/** The keywords whose subschemas apply at the same place of the value: a cycle through them never ends. */
const IN_PLACE = ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas', '$ref'] as const;
/** Keywords this check does not follow, so it refuses them: a reference it cannot resolve could loop or reach the network. */
const REFUSED_KEYWORDS = ['$dynamicRef', '$recursiveRef', '$id', '$anchor', '$dynamicAnchor', '$recursiveAnchor'];
/** A group that is repeated and holds a repetition: `(a+)+`, `(a*)*`, `(\w+\s?)*`, the shapes that backtrack without end. */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{]/;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value at a local JSON pointer (`#`, `#/$defs/x`), or undefined. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let v: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(v)) v = v[Number(key)];
    else if (isObj(v)) v = Object.hasOwn(v, key) ? v[key] : undefined;
    else return undefined;
  }
  return v;
}

/** Every schema object in the document, with its JSON path for a refusal (walked without recursion). */
function schemaNodes(root: Obj): { node: Obj; path: string }[] {
  const out: { node: Obj; path: string }[] = [];
  const todo: { v: unknown; path: string }[] = [{ v: root, path: '' }];
  const seen = new Set<unknown>();
  while (todo.length > 0) {
    const { v, path } = todo.pop() as { v: unknown; path: string };
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    if (isObj(v)) out.push({ node: v, path });
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [`[${i}]`, x]) : Object.entries(v).map(([k, x]) => [`.${k}`, x]);
    for (const [k, x] of entries) todo.push({ v: x, path: `${path}${k}` });
  }
  return out;
}

/** The subschemas of `node` that apply at the same place of the value (resolving `$ref`). */
function inPlaceChildren(root: Obj, node: Obj): unknown[] {
  const out: unknown[] = [];
  for (const k of IN_PLACE) {
    const v = node[k];
    if (k === '$ref') {
      if (typeof v === 'string') out.push(resolvePointer(root, v));
    } else if (Array.isArray(v)) out.push(...v);
    else if (k === 'dependentSchemas' && isObj(v)) out.push(...Object.values(v));
    else if (v !== undefined) out.push(v);
  }
  return out.filter(isObj);
}

/**
 * Why this output schema cannot be taken, in words naming the limit or the
 * spot; null when it can. Checked at start (the input's check), so a run never
 * meets a schema that would overflow the validator's stack, reach for a
 * remote reference or backtrack for minutes on the model's answer.
 */
export function outputSchemaProblem(schema: unknown): string | null {
  if (!isObj(schema)) return `must be a JSON Schema object like {"type": "object", "properties": {...}}, got ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}`;
  const depth = nestingDepth(schema, MAX_OUTPUT_SCHEMA_DEPTH);
  if (depth > MAX_OUTPUT_SCHEMA_DEPTH) return `is nested more than ${MAX_OUTPUT_SCHEMA_DEPTH} levels deep; the limit is ${MAX_OUTPUT_SCHEMA_DEPTH}`;
  const bytes = utf8Length(JSON.stringify(schema));
  if (bytes > MAX_OUTPUT_SCHEMA_BYTES) return `is ${bytes} bytes as JSON; the limit is ${MAX_OUTPUT_SCHEMA_BYTES} (it travels with every model call)`;
  const nodes = schemaNodes(schema);
  for (const { node, path } of nodes) {
    const at = path === '' ? '' : ` at ${path.replace(/^\./, '')}`;
    for (const k of REFUSED_KEYWORDS) if (k in node) return `uses "${k}"${at}: only local references like "#/$defs/name" are taken`;
    if ('$ref' in node) {
      const ref = node.$ref;
      if (typeof ref !== 'string' || !(ref === '#' || ref.startsWith('#/'))) return `has "$ref": ${JSON.stringify(ref)}${at}: only local references like "#/$defs/name" are taken`;
      const target = resolvePointer(schema, ref);
      if (!isObj(target) && typeof target !== 'boolean') return `has "$ref": ${JSON.stringify(ref)}${at}, which points at no schema`;
    }
    for (const k of ['pattern', 'patternProperties'] as const) {
      const patterns = k === 'pattern' ? (typeof node.pattern === 'string' ? [node.pattern] : []) : isObj(node.patternProperties) ? Object.keys(node.patternProperties) : [];
      for (const p of patterns) {
        try {
          new RegExp(p, 'u');
        } catch {
          return `has a "${k}" that is not a regular expression${at}: ${JSON.stringify(p.slice(0, 80))}`;
        }
        if (NESTED_QUANTIFIER.test(p)) return `has a "${k}" with a repeated group that repeats inside${at} (${JSON.stringify(p.slice(0, 80))}): it can take minutes on one answer; write it without nested repetition`;
      }
    }
  }
  const loop = inPlaceLoop(schema, nodes);
  if (loop !== null) return `has a reference loop that never reaches the value${loop === '' ? '' : ` at ${loop}`} (a "$ref" or "allOf" that comes back to itself): validation would never end`;
  // Last: any other way the validator refuses it (an unknown draft feature it throws on).
  try {
    schemaProblem(schema, null, 'output');
  } catch (err) {
    return `cannot be applied: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
  }
  return null;
}

/** The path of a schema node on a cycle of in-place subschemas, or null: colour DFS, without recursion. */
function inPlaceLoop(root: Obj, nodes: { node: Obj; path: string }[]): string | null {
  const state = new Map<Obj, 1 | 2>();
  const pathOf = new Map(nodes.map((n) => [n.node, n.path.replace(/^\./, '')]));
  for (const { node } of nodes) {
    if (state.has(node)) continue;
    const stack: { node: Obj; children: Obj[]; i: number }[] = [{ node, children: inPlaceChildren(root, node) as Obj[], i: 0 }];
    state.set(node, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.i >= top.children.length) {
        state.set(top.node, 2);
        stack.pop();
        continue;
      }
      const child = top.children[top.i++];
      const s = state.get(child);
      if (s === 1) return pathOf.get(child) ?? '';
      if (s === 2) continue;
      state.set(child, 1);
      stack.push({ node: child, children: inPlaceChildren(root, child) as Obj[], i: 0 });
    }
  }
  return null;
}

/** A final answer checked against the schema: its value, or why it is a miss (words the model can act on). */
export type AnswerCheck = { ok: true; value: unknown } | { ok: false; problem: string };

/** A whole reply that is one fenced block (```json … ``` or ``` … ```): its inside. */
const FENCED = /^```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

/**
 * The answer as JSON valid against the schema. A reply that is one fenced
 * block (```json … ```) is read as its inside: models wrap JSON so out of
 * habit, and the value is the same; anything else around the JSON is a miss.
 */
export function checkAnswer(schema: Record<string, unknown>, text: string): AnswerCheck {
  if (text.length > MAX_STRUCTURED_ANSWER_CHARS) {
    return { ok: false, problem: `the answer is ${text.length} characters; a structured answer may be at most ${MAX_STRUCTURED_ANSWER_CHARS}` };
  }
  const trimmed = text.trim();
  const json = FENCED.exec(trimmed)?.[1] ?? trimmed;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, problem: json === '' ? 'the answer is empty, not JSON' : `the answer is not JSON (${why.slice(0, 200)})` };
  }
  const depth = nestingDepth(value, MAX_STRUCTURED_ANSWER_DEPTH);
  if (depth > MAX_STRUCTURED_ANSWER_DEPTH) return { ok: false, problem: `the answer is nested more than ${MAX_STRUCTURED_ANSWER_DEPTH} levels deep; the limit is ${MAX_STRUCTURED_ANSWER_DEPTH}` };
  const problem = schemaProblem(schema, value, 'answer');
  return problem ? { ok: false, problem: `the answer does not match the output schema: ${problem}` } : { ok: true, value };
}

/** The message the model reads after a miss: what is wrong, the schema, and how many tries are left. */
export function outputFeedback(problem: string, schema: Record<string, unknown>, triesLeft: number): string {
  const tries = triesLeft === 1 ? 'This is the last try.' : `${triesLeft} tries left.`;
  return `Your final answer was not accepted: ${problem}. Reply with only a JSON value valid against this JSON Schema (no other text), or call a tool first if you need to: ${JSON.stringify(schema)}. ${tries}`;
}

/** The schema said in the prompt, for a provider the harness cannot give it as a request option (the AI SDK providers: their packages may drop it). */
export function schemaInstruction(schema: Record<string, unknown>): string {
  return `When you give your final answer (a reply without tool calls), reply with only a JSON value valid against this JSON Schema, no other text: ${JSON.stringify(schema)}`;
}
