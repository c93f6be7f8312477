// The arithmetic of a hard budget (common/budget-math.ts): a hold never lets
// the run's total pass its budget as the run adds it, not by a picodollar.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addUsd, childReservation, costUsd, EXACT_PROMPT_COUNT, FOREIGN_PROMPT_COUNT, heldPromptTokens, promptCountMargin, replyAllowance, settleReply, worstCasePricing, type ReplyBudget } from '../../common/budget-math.js';
import { propertyParams } from '../helpers/property.js';

// What a run has committed, its budget and a prompt's size, as the properties generate them.
const committedUsd = fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 1e9);
const budgetUsd = fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 1e8);
const promptTokenCount = fc.integer({ min: 1, max: 200_000 });

const CHAPTER = { inputPerMTokUsd: 2, outputPerMTokUsd: 12 };
const budget = (committedUsd: number, maxUsd: number, extra: Partial<ReplyBudget> = {}): ReplyBudget => ({
  committedUsd,
  maxUsd,
  pricing: CHAPTER,
  minReplyTokens: 256,
  maxReplyTokens: 4096,
  ...extra,
});

describe('replyAllowance', () => {
  it('sends the largest max_tokens the budget pays for on top of the prompt', () => {
    // $0.01 left, 1000 prompt tokens ($0.002): $0.008 / $12 per M = 666 tokens.
    const a = replyAllowance(budget(0, 0.01), 1000);
    expect(a).toEqual({ ok: true, hold: { promptTokens: 1000, maxTokens: 666, reservedUsd: costUsd({ promptTokens: 1000, completionTokens: 666 }, CHAPTER) } });
  });

  it('never sends more than maxReplyTokens, however large the budget', () => {
    const a = replyAllowance(budget(0, 100), 1000);
    expect(a.ok && a.hold.maxTokens).toBe(4096);
  });

  it('says what a call needs when not even minReplyTokens fits, and what budget pays for it', () => {
    const a = replyAllowance(budget(0.009, 0.01), 1000);
    expect(a.ok).toBe(false);
    if (a.ok) return;
    const need = costUsd({ promptTokens: 1000, completionTokens: 256 }, CHAPTER);
    expect(a.shortfall).toMatchObject({ promptTokens: 1000, minReplyTokens: 256, needUsd: need });
    expect(a.shortfall.needBudgetUsd).toBeGreaterThanOrEqual(addUsd(0.009, need));
    // A raise to needBudgetUsd is enough.
    expect(replyAllowance(budget(0.009, a.shortfall.needBudgetUsd), 1000).ok).toBe(true);
  });

  it('property: a hold never takes the total past the budget', () => {
    fc.assert(
      fc.property(
        committedUsd,
        budgetUsd,
        promptTokenCount,
        fc.integer({ min: 0, max: 3000 }).map((n) => n / 100),
        fc.integer({ min: 0, max: 6000 }).map((n) => n / 100),
        (committed, max, prompt, inP, outP) => {
          const pricing = { inputPerMTokUsd: inP, outputPerMTokUsd: outP };
          const a = replyAllowance(budget(committed, max, { pricing, minReplyTokens: 1 }), prompt);
          if (!a.ok) return;
          expect(addUsd(committed, a.hold.reservedUsd)).toBeLessThanOrEqual(max);
          // The reply the provider may write costs at most the hold, counted the way the run counts it.
          expect(addUsd(committed, costUsd({ promptTokens: prompt, completionTokens: a.hold.maxTokens }, pricing))).toBeLessThanOrEqual(max);
        },
      ),
      propertyParams(2000),
    );
  });
});

describe('the prompt-count margin of a model whose tokenizer is not ours', () => {
  it('is exact for o200k_base models and the scripted ones, 3 × + 600 for any other, and the pricing\'s own when it gives one', () => {
    for (const m of ['gpt-4o-mini', 'gpt-4.1', 'openai/gpt-5', 'o3-mini', 'o4-mini', 'plan', 'runaway']) expect(promptCountMargin(m, CHAPTER), m).toEqual(EXACT_PROMPT_COUNT);
    for (const m of ['claude-sonnet-4-5', 'anthropic/claude-3-5-haiku', 'gpt-4-turbo', 'gpt-3.5-turbo', 'llama-3.1-8b', 'smollm2', 'mistral-large', 'o1x', 'gemini-2.5-pro']) expect(promptCountMargin(m, CHAPTER), m).toEqual(FOREIGN_PROMPT_COUNT);
    const own = { factor: 1.3, overheadTokens: 350 };
    expect(promptCountMargin('claude-sonnet-4-5', { ...CHAPTER, promptCount: own })).toEqual(own);
    expect(promptCountMargin('gpt-4o', { ...CHAPTER, promptCount: own })).toEqual(own);
  });

  it('holds the counted prompt times the factor plus the overhead, and parks on that worst case', () => {
    const a = replyAllowance(budget(0, 0.1), 1000, FOREIGN_PROMPT_COUNT);
    expect(a.ok && a.hold.promptTokens).toBe(3600);
    // $0.01: 1000 counted tokens and a 256-token reply fit exactly ($0.005072); held as 3600, they do not ($0.010272).
    expect(replyAllowance(budget(0, 0.01), 1000, EXACT_PROMPT_COUNT).ok).toBe(true);
    const b = replyAllowance(budget(0, 0.01), 1000, FOREIGN_PROMPT_COUNT);
    expect(b.ok).toBe(false);
    if (b.ok) return;
    expect(b.shortfall.promptTokens).toBe(3600);
    expect(b.shortfall.needUsd).toBe(costUsd({ promptTokens: 3600, completionTokens: 256 }, CHAPTER));
  });

  it('property: whatever a foreign tokenizer counts up to factor × ours + overhead, the reply costs at most its hold', () => {
    fc.assert(
      fc.property(
        committedUsd,
        budgetUsd,
        promptTokenCount,
        fc.record({ factor: fc.integer({ min: 100, max: 500 }).map((n) => n / 100), overheadTokens: fc.integer({ min: 0, max: 2000 }) }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (committed, max, counted, margin, share) => {
          const a = replyAllowance(budget(committed, max, { minReplyTokens: 1 }), counted, margin);
          if (!a.ok) return;
          expect(a.hold.promptTokens).toBe(heldPromptTokens(counted, margin));
          // The provider's own count: anywhere from ours up to the margin's bound.
          const billed = Math.floor(counted + share * (heldPromptTokens(counted, margin) - counted));
          const r = settleReply({ promptTokens: billed, completionTokens: a.hold.maxTokens }, CHAPTER, a.hold, 1);
          expect(r.over).toBeNull();
          expect(addUsd(committed, r.chargedUsd)).toBeLessThanOrEqual(max);
        },
      ),
      propertyParams(2000),
    );
  });
});

describe('childReservation', () => {
  it('gives a child its cap, at most what the parent has neither spent nor holds', () => {
    expect(childReservation(0.05, 0, 1)).toBe(0.05);
    expect(childReservation(0.05, 0.98, 1)).toBeCloseTo(0.02, 12);
    expect(childReservation(0.05, 1, 1)).toBe(0);
  });

  it('property: holds taken one after another never add up past the budget', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 1e8), fc.array(fc.integer({ min: 1, max: 1000 }).map((n) => n / 1e4), { maxLength: 8 }), (max, caps) => {
        let committed = 0;
        for (const cap of caps) committed = addUsd(committed, childReservation(cap, committed, max));
        expect(committed).toBeLessThanOrEqual(max);
      }),
      propertyParams(2000),
    );
  });
});

describe('settleReply', () => {
  const hold = { promptTokens: 1000, maxTokens: 300, reservedUsd: costUsd({ promptTokens: 1000, completionTokens: 300 }, CHAPTER) };

  it('charges what an honest reply reported', () => {
    expect(settleReply({ promptTokens: 1000, completionTokens: 40 }, CHAPTER, hold, 3)).toEqual({ chargedUsd: costUsd({ promptTokens: 1000, completionTokens: 40 }, CHAPTER), over: null });
  });

  it('charges at most the hold for a reply that reports more completion tokens than max_tokens, and flags it', () => {
    const s = settleReply({ promptTokens: 1000, completionTokens: 1300 }, CHAPTER, hold, 3);
    expect(s.chargedUsd).toBe(hold.reservedUsd);
    expect(s.over).toMatchObject({ turn: 3, maxTokens: 300, completionTokens: 1300, reservedUsd: hold.reservedUsd });
    expect(s.over?.excessUsd).toBeCloseTo(1000 * 12e-6, 12);
  });
});

describe('cache and reasoning rates', () => {
  const p = { inputPerMTokUsd: 3, outputPerMTokUsd: 15, cacheReadPerMTokUsd: 0.3, cacheWritePerMTokUsd: 3.75, reasoningPerMTokUsd: 20 };

  it('prices each part of the prompt and the reply at its own rate', () => {
    // 1000 prompt tokens: 600 read, 100 written, 300 plain; 200 reply tokens: 50 reasoning.
    const usage = { promptTokens: 1000, completionTokens: 200, cacheReadTokens: 600, cacheWriteTokens: 100, reasoningTokens: 50 };
    expect(costUsd(usage, p)).toBeCloseTo((300 * 3 + 600 * 0.3 + 100 * 3.75 + 150 * 15 + 50 * 20) / 1e6, 15);
  });

  it('without the parts, or without their rates, the old formula exactly', () => {
    fc.assert(
      fc.property(fc.nat(1e6), fc.nat(1e5), fc.nat(1e6), fc.nat(1e6), fc.nat(1e5), (prompt, completion, read, write, reasoning) => {
        const plain = { inputPerMTokUsd: 2, outputPerMTokUsd: 12 };
        const old = (prompt * 2 + completion * 12) / 1e6;
        expect(costUsd({ promptTokens: prompt, completionTokens: completion }, p)).toBe((prompt * 3 + completion * 15) / 1e6);
        const parts = { promptTokens: prompt, completionTokens: completion, cacheReadTokens: Math.min(read, prompt), cacheWriteTokens: Math.min(write, prompt - Math.min(read, prompt)), reasoningTokens: Math.min(reasoning, completion) };
        expect(costUsd(parts, plain)).toBeCloseTo(old, 9);
      }),
      propertyParams(),
    );
  });

  it('a hold counts at the dearest input and output rates; a model with only the two rates holds as before', () => {
    expect(worstCasePricing(p)).toEqual({ inputPerMTokUsd: 3.75, outputPerMTokUsd: 20 });
    expect(worstCasePricing({ inputPerMTokUsd: 2, outputPerMTokUsd: 12 })).toEqual({ inputPerMTokUsd: 2, outputPerMTokUsd: 12 });
    const b: ReplyBudget = { committedUsd: 0, maxUsd: 0.01, pricing: p, minReplyTokens: 1, maxReplyTokens: 100_000 };
    const a = replyAllowance(b, 1000);
    if (!a.ok) throw new Error('expected a hold');
    expect(a.hold.maxTokens).toBe(Math.floor((0.01 - (1000 * 3.75) / 1e6) / (20 / 1e6)));
  });
});
