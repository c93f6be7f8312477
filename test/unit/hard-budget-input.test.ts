// A hard budget's input, checked where every input is (common/input.ts):
// settings a soft budget would ignore are refused, not silently dropped, and
// a model the worker cannot price is refused naming it.
import { describe, expect, it } from 'vitest';
import { parseInput, type PriceOf } from '../../common/input.js';
import { BUILT_IN_DEFAULTS } from '../../common/defaults.js';
import { BUILTIN_SPECS } from '../helpers/builtin-specs.js';

const prices: PriceOf = (model) => ({ sentModel: model, pricing: model === 'plan' ? { inputPerMTokUsd: 2, outputPerMTokUsd: 12 } : null });
const parse = (raw: unknown) => parseInput(raw, BUILT_IN_DEFAULTS, BUILTIN_SPECS, prices);

describe('hard budget input', () => {
  it('fills minReplyTokens, maxReplyTokens and budgetTimeoutMs; a soft run carries no hardBudget at all', () => {
    expect(parse({ task: 't', model: 'plan', limits: { budgetMode: 'hard', maxBudgetUsd: 0.1 } }).hardBudget).toEqual({ minReplyTokens: 256, maxReplyTokens: 4096, budgetTimeoutMs: null });
    expect(parse({ task: 't', model: 'plan', limits: { budgetMode: 'hard', minReplyTokens: 50, maxReplyTokens: 900 }, budgetTimeoutMs: 60_000 }).hardBudget).toEqual({ minReplyTokens: 50, maxReplyTokens: 900, budgetTimeoutMs: 60_000 });
    expect('hardBudget' in parse({ task: 't', model: 'plan' })).toBe(false);
    expect('hardBudget' in parse({ task: 't', model: 'plan', limits: { budgetMode: 'soft' } })).toBe(false);
  });

  it.each([
    [{ limits: { budgetMode: 'firm' } }, 'invalid input: limits.budgetMode must be one of soft | hard, got "firm"'],
    [{ limits: { minReplyTokens: 10 } }, 'invalid input: limits.minReplyTokens applies only with limits.budgetMode "hard"'],
    [{ budgetTimeoutMs: 1000 }, 'invalid input: budgetTimeoutMs applies only with limits.budgetMode "hard"'],
    [{ limits: { budgetMode: 'hard', maxBudgetUsd: null } }, 'invalid input: limits.maxBudgetUsd must be set with limits.budgetMode "hard" (a hard budget needs an amount)'],
    [{ limits: { budgetMode: 'hard', minReplyTokens: 0 } }, 'invalid input: limits.minReplyTokens must be an integer between 1 and 1000000, got 0'],
    [{ limits: { budgetMode: 'hard', minReplyTokens: 500, maxReplyTokens: 100 } }, 'invalid input: limits.maxReplyTokens must be at least limits.minReplyTokens (500), got 100'],
    [{ limits: { budgetMode: 'hard' }, budgetTimeoutMs: -5 }, 'invalid input: budgetTimeoutMs must be a number > 0, got -5'],
    [{ model: 'house-7b', limits: { budgetMode: 'hard' } }, 'invalid input: model "house-7b" has no price, and a hard budget (limits.budgetMode "hard") needs one: give "pricing" in the input or list the model in the worker\'s AGENT_MODEL_PRICES'],
  ])('refuses %j', (extra, message) => {
    expect(() => parse({ task: 't', model: 'plan', ...extra })).toThrow(message);
  });

  it('an unpriced model runs hard when the input gives both prices', () => {
    const cfg = parse({ task: 't', model: 'house-7b', limits: { budgetMode: 'hard' }, pricing: { inputPerMTokUsd: 0.1, outputPerMTokUsd: 0.4 } });
    expect(cfg.pricing).toEqual({ inputPerMTokUsd: 0.1, outputPerMTokUsd: 0.4 });
  });
});
