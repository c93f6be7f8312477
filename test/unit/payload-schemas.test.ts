// The signal and update payloads and the fork input, checked by their schemas
// (common/signal-schemas.ts, common/input-schema.ts): a payload with one field
// made bad is refused with one line that names that field; a good one passes.
// The exact words of each refusal are pinned by the tests of each concern
// (steering, approvals, update refusals, fork); this checks the rule for any
// payload fast-check can build.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../common/input.js';
import { parseForkFrom } from '../../common/fork-input.js';
import {
  argsHashSchema,
  decisionSchema,
  MAX_STEER_CHARS,
  payloadProblem,
  raiseBudgetSchema,
  reconcileAnswerSchema,
  reconcileCallSchema,
  steerSchema,
  verdictSchema,
} from '../../common/signal-schemas.js';
import { propertyParams } from '../helpers/property.js';

const params = propertyParams();

const json = fc.jsonValue({ maxDepth: 2 });
const nonBlank = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '');
/** Any JSON value but one of the given type (and never undefined: a JSON payload has none). */
const not = (ok: (v: unknown) => boolean) => json.filter((v) => !ok(v));
const isString = (v: unknown) => typeof v === 'string';

/** One line, naming the field. */
function expectRefusal(problem: string | null, field: string): void {
  expect(problem).not.toBeNull();
  expect(problem).not.toContain('\n');
  expect(problem).toContain(field);
}

/** A good payload with one field replaced by a bad value. */
const spoiled = <T extends Record<string, unknown>>(good: fc.Arbitrary<T>, bad: Record<string, fc.Arbitrary<unknown>>) =>
  fc.tuple(good, fc.constantFrom(...Object.keys(bad))).chain(([payload, field]) => bad[field].map((value) => ({ payload: { ...payload, [field]: value }, field })));

describe('payload schemas', () => {
  it('steer', () => {
    const good = fc.record({ message: nonBlank, by: fc.option(fc.string(), { nil: undefined }), interrupt: fc.option(fc.boolean(), { nil: undefined }) });
    fc.assert(fc.property(good, (p) => {
      expect(payloadProblem(steerSchema(), p)).toBeNull();
    }), params);
    const bad = {
      message: fc.oneof(not(isString), fc.constantFrom('', ' \n'), fc.constant('x'.repeat(MAX_STEER_CHARS + 1))),
      by: not((v) => v === null || isString(v)),
      interrupt: not((v) => v === null || typeof v === 'boolean'),
    };
    fc.assert(fc.property(spoiled(good, bad), ({ payload, field }) => {
      expectRefusal(payloadProblem(steerSchema(), payload), field);
    }), params);
  });

  it('approve / reject / decide', () => {
    const good = fc.record({ callId: fc.string(), decision: fc.constantFrom('approve', 'reject'), argsHash: fc.stringMatching(/^[0-9a-f]{64}$/) });
    const problem = (p: Record<string, unknown>) => payloadProblem(decisionSchema(), p) ?? payloadProblem(verdictSchema(), p.decision) ?? payloadProblem(argsHashSchema(), p.argsHash);
    fc.assert(fc.property(good, (p) => {
      expect(problem(p)).toBeNull();
    }), params);
    const bad = { callId: not(isString), decision: not((v) => v === 'approve' || v === 'reject'), argsHash: not(isString) };
    fc.assert(fc.property(spoiled(good, bad), ({ payload, field }) => {
      expectRefusal(problem(payload), field);
    }), params);
  });

  it('raiseBudget', () => {
    const current = fc.double({ min: 0, max: 100, noNaN: true });
    fc.assert(
      fc.property(current, fc.double({ min: 0.001, max: 100, noNaN: true }), nonBlank, (now, more, by) => {
        expect(payloadProblem(raiseBudgetSchema(now), { maxBudgetUsd: now + more, by })).toBeNull();
      }),
      params,
    );
    const bad = { maxBudgetUsd: fc.oneof(not((v) => typeof v === 'number'), fc.double({ min: -100, max: 0, noNaN: true })), by: fc.oneof(not(isString), fc.constantFrom('', '  ')) };
    const good = fc.record({ maxBudgetUsd: fc.double({ min: 1, max: 100, noNaN: true }), by: nonBlank });
    fc.assert(fc.property(spoiled(good, bad), ({ payload, field }) => {
      expectRefusal(payloadProblem(raiseBudgetSchema(0), payload), field);
    }), params);
  });

  it('reconcile', () => {
    const by = fc.option(fc.string(), { nil: undefined });
    const good = fc.oneof(fc.record({ callId: nonBlank, outcome: fc.constant('happened'), result: nonBlank, by }), fc.record({ callId: nonBlank, outcome: fc.constant('retry'), by }));
    const problem = (p: unknown) => payloadProblem(reconcileCallSchema(), p) ?? payloadProblem(reconcileAnswerSchema(), p);
    fc.assert(fc.property(good, (p) => {
      expect(problem(p)).toBeNull();
    }), params);
    const happened = fc.record({ callId: nonBlank, outcome: fc.constant('happened'), result: nonBlank });
    const bad = { callId: fc.oneof(not(isString), fc.constant('')), outcome: not((v) => v === 'happened' || v === 'retry'), result: fc.oneof(not(isString), fc.constantFrom('', ' ')), by: not(isString) };
    fc.assert(fc.property(spoiled(happened, bad), ({ payload, field }) => {
      expectRefusal(problem(payload), field);
    }), params);
  });

  it('forkFrom', () => {
    const good = fc.record({ run: nonBlank, atTurn: fc.nat(50), message: fc.option(nonBlank, { nil: undefined }), turnCostsUsd: fc.option(fc.array(fc.double({ min: 0, max: 1, noNaN: true })), { nil: undefined }) });
    const fork = (forkFrom: Record<string, unknown>) => {
      try {
        parseForkFrom({ forkFrom });
        return null;
      } catch (err) {
        if (!(err instanceof InputError)) throw err;
        return err;
      }
    };
    fc.assert(fc.property(good, (f) => {
      expect(fork(f)).toBeNull();
    }), params);
    const bad = {
      run: fc.oneof(not(isString), fc.constant(' ')),
      atTurn: fc.oneof(not((v) => typeof v === 'number'), fc.integer({ min: -50, max: -1 }), fc.constant(1.5)),
      message: fc.oneof(not(isString), fc.constant('')),
      transcript: fc.oneof(not(Array.isArray), fc.constant([]), fc.constant([{ role: 'nobody' }]), fc.constant([{ role: 'user', content: 3 }])),
      turnCostsUsd: fc.oneof(not(Array.isArray), fc.constant([-1]), fc.constant(['0.1'])),
    };
    fc.assert(
      fc.property(spoiled(good, bad), ({ payload, field }) => {
        const err = fork(payload);
        expect(err).not.toBeNull();
        expect(err?.field.startsWith(`forkFrom.${field}`)).toBe(true);
        expect(err?.message).not.toContain('\n');
      }),
      params,
    );
  });
});
