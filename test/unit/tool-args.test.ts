// Tool argument checks: the workflow validates with @cfworker/json-schema (an
// interpreter, light enough for every workflow to hold its own copy). Ajv, the
// reference, checks here that every schema is valid JSON Schema and that both
// agree on generated arguments.
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argumentProblem } from '../../common/tool-args.js';
import { BUILTIN_SPECS } from '../helpers/builtin-specs.js';
import type { ToolSpec } from '../../common/tool-spec.js';
import { propertyParams } from '../helpers/property.js';

describe('tool schemas', () => {
  it('every tool schema is a valid JSON Schema', () => {
    const full = new Ajv({ allErrors: true, strict: true });
    for (const spec of BUILTIN_SPECS) {
      const name = spec.name;
      expect({ name, valid: full.validateSchema(spec.parameters), errors: full.errors ?? null }).toEqual({ name, valid: true, errors: null });
    }
  });

  it('the workflow validator and Ajv agree on every tool, for generated arguments', () => {
    const full = new Ajv({ allErrors: true, strict: true });
    const names = BUILTIN_SPECS.map((s) => s.name);
    const checks = new Map(BUILTIN_SPECS.map((s) => [s.name, full.compile(s.parameters)]));
    // Mostly near-valid arguments: the keys the tools take, values of any type.
    const value = fc.oneof(fc.string({ maxLength: 600 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }));
    const args = fc.dictionary(fc.constantFrom('path', 'question', 'pattern', 'extra', 'mode'), value, { maxKeys: 3 });
    fc.assert(
      fc.property(fc.constantFrom(...names), args, (name, a) => {
        const problem = argumentProblem(BUILTIN_SPECS.find((s) => s.name === name)!, a);
        expect(problem === null).toBe(checks.get(name)!(a));
        if (problem) expect(problem).toMatch(new RegExp(`^invalid arguments for ${name}: `));
      }),
      propertyParams(2000),
    );
  });
});

describe('argument problems in the harness own words', () => {
  const spec = {
    name: 'write_note',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 }, mode: { enum: ['append', 'replace'] }, count: { type: 'integer', minimum: 1 } },
      required: ['path'],
      additionalProperties: false,
    },
  } as const satisfies Pick<ToolSpec, 'name' | 'parameters'>;
  it.each([
    [{ path: 42 }, '/path: must be of type string, got integer'],
    [{}, 'arguments: is missing required property "path"'],
    [{ path: 'a', colour: 'red' }, 'arguments: has unexpected property "colour"'],
    [{ path: 'a', mode: 'erase' }, '/mode: must be one of ["append","replace"]'],
    [{ path: '' }, '/path: must be at least 1 characters long'],
    [{ path: 'a', count: 0 }, '/count: must be >= 1'],
  ])('%j -> %s (built from the schema, not from the library message text)', (args, why) => {
    expect(argumentProblem(spec, args)).toBe(`invalid arguments for write_note: ${why}. Expected: ${JSON.stringify(spec.parameters)}`);
  });
});
