// Attacks on a sub-agent's own limits (SubAgentSpec.limits, issue 35 item 4):
// whatever a tool author or a plain object given to the worker puts there, a
// bad value stops the worker at start with a message naming the tool and the
// field, never a run that starts children without a limit; and whatever cap a
// spec asks for, the children of one reply are never given more than their
// parent has left, in either budget mode.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineSubAgent, type SubAgentDefinition } from '../../activities/tools/define-tool.js';
import { parseBuiltin } from '../helpers/builtin-specs.js';
import { initialState } from '../../workflows/run-state.js';
import { budgetStrategy } from '../../workflows/budget.js';
import { buildToolset } from '../../worker/toolset.js';
import { OPTION_NAMES } from '../../worker/setting-names.js';
import { propertyParams } from '../helpers/property.js';

const sub = (limits: unknown): SubAgentDefinition =>
  ({
    name: 'delegate',
    description: 'Delegate a question.',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    readOnly: true,
    subAgent: { taskArgument: 'q', tools: ['list_files'], limits },
  }) as SubAgentDefinition;

describe('a sub-agent spec with hostile limits', () => {
  const refused: [unknown, RegExp][] = [
    [{ maxUsd: -1 }, /subAgent\.limits\.maxUsd must be a positive number of USD, got -1/],
    [{ maxUsd: 0 }, /subAgent\.limits\.maxUsd must be a positive number/],
    [{ maxUsd: Number.NaN }, /subAgent\.limits\.maxUsd must be a positive number/],
    [{ maxUsd: Number.POSITIVE_INFINITY }, /subAgent\.limits\.maxUsd must be a positive number/],
    [{ maxUsd: '0.1' }, /subAgent\.limits\.maxUsd must be a positive number of USD, got "0\.1"/],
    [{ maxUsd: null }, /subAgent\.limits\.maxUsd/],
    [{ maxTurns: 0 }, /subAgent\.limits\.maxTurns must be a positive integer, got 0/],
    [{ maxTurns: 1.5 }, /subAgent\.limits\.maxTurns must be a positive integer/],
    [{ maxTurns: 1e20 }, /subAgent\.limits\.maxTurns must be a positive integer/],
    [{ maxTurns: '6' }, /subAgent\.limits\.maxTurns must be a positive integer, got "6"/],
    // A misspelt field would silently leave the default in force: refused, naming it.
    [{ maxBudgetUsd: 0.01 }, /subAgent\.limits has unknown field\(s\) maxBudgetUsd/],
    [[], /subAgent\.limits must be an object/],
    ['0.05', /subAgent\.limits must be an object/],
    [null, /subAgent\.limits must be an object/],
  ];

  it.each(refused)('defineSubAgent refuses limits %j, naming the tool and the field', (limits, message) => {
    expect(() => defineSubAgent(sub(limits))).toThrow(/^defineSubAgent: tool delegate: /);
    expect(() => defineSubAgent(sub(limits))).toThrow(message);
  });

  it.each(refused)('a plain object with limits %j given to the worker stops it at start, naming where it was given', (limits, message) => {
    const build = () => buildToolset({ tools: [sub(limits)], only: null, names: OPTION_NAMES });
    expect(build).toThrow(/AgentPlugin option tools\[0\]: tool delegate: /);
    expect(build).toThrow(message);
  });

  it('limits within range, or none, are taken', () => {
    expect(() => defineSubAgent(sub({ maxTurns: 1, maxUsd: 1e-6 }))).not.toThrow();
    expect(() => defineSubAgent(sub(undefined))).not.toThrow();
    expect(() => defineSubAgent(sub({}))).not.toThrow();
  });
});

describe('a sub-agent asking for any cap', () => {
  it('property: the children of one reply never get more than their parent has left, nor more than their caps (soft and hard)', () => {
    const cap = fc.oneof(fc.double({ min: 1e-9, max: 1e6, noNaN: true, noDefaultInfinity: true }), fc.constant(Number.MAX_VALUE));
    fc.assert(
      fc.property(
        fc.constantFrom('soft', 'hard'),
        fc.double({ min: 0.0001, max: 10, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(cap, { minLength: 1, maxLength: 6 }),
        (mode, maxBudgetUsd, spentShare, caps) => {
          const cfg = parseBuiltin({ task: 't', model: 'plan', limits: { maxBudgetUsd, maxTurns: 5, budgetMode: mode } });
          const state = initialState(cfg);
          state.costUsd = maxBudgetUsd * spentShare;
          const strategy = budgetStrategy({ cfg, state, emit: () => undefined, showParked: () => undefined }, null);
          const given = strategy.reserve(caps);
          const left = Math.max(0, maxBudgetUsd - state.costUsd);
          expect(given).toHaveLength(caps.length);
          given.forEach((g, i) => {
            expect(g).toBeGreaterThanOrEqual(0);
            expect(g).toBeLessThanOrEqual(caps[i]);
          });
          expect(given.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(left + 1e-9);
        },
      ),
      propertyParams(),
    );
  });
});
