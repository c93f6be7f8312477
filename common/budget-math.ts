// The arithmetic of a hard budget, with no Temporal import: what a model call
// may cost at worst, the largest reply the budget pays for, what a child run
// may be given, what a reply is charged. Used by the model activity (which
// counts the prompt it sends) and by the workflow (which holds the budget);
// test/unit/budget-math.test.ts checks it in microseconds.
//
// Every comparison is made the way the run adds its spend (addUsd: a running
// total kept to a picodollar), so "fits" here means the total the run will
// report stays at or under its budget — not merely close to it.
import type { OverReservationFlag as OverReservation, Pricing, PromptCountMargin, Usage } from './contract.js';
import { SCRIPTED_MODELS } from './scripted-models.js';

/** Our count is the provider's: the model tokenizes with o200k_base. */
export const EXACT_PROMPT_COUNT: PromptCountMargin = { factor: 1, overheadTokens: 0 };

/**
 * The margin for a model whose tokenizer is not o200k_base, measured over 52
 * harness prompts (npx tsx bench/tokenizer-margin.ts, reports/tokenizer-margin.md):
 * the worst ratio of a chat model's tokenizer to ours was 2.90 (SmolLM2's, as
 * llama-server bills it, on a tool result of digits; Llama 2 and Mistral 2.86,
 * cl100k 2.11, Llama 3 1.20), so 3 ×; and 600 tokens a request above the
 * largest tool-use system prompt Anthropic lists (530) and the 190–202 a
 * chat template with five tools adds. Ordinary English and code are held
 * 2–3 × what they cost: the price of a promise kept for Arabic or digits.
 */
export const FOREIGN_PROMPT_COUNT: PromptCountMargin = { factor: 3, overheadTokens: 600 };

/** Model ids whose tokenizer is o200k_base (after a provider prefix such as `openai/`). */
const O200K_MODEL = /^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4)(\b|-|$)/;

/** The margin a hard budget holds for this model's prompt: the pricing's own, else by the model's tokenizer. */
export function promptCountMargin(model: string, pricing: Pricing): PromptCountMargin {
  if (pricing.promptCount) return pricing.promptCount;
  const id = model.slice(model.lastIndexOf('/') + 1);
  return (SCRIPTED_MODELS as readonly string[]).includes(id) || O200K_MODEL.test(id) ? EXACT_PROMPT_COUNT : FOREIGN_PROMPT_COUNT;
}

/** The prompt tokens a hard budget holds for a prompt it counted. */
export const heldPromptTokens = (counted: number, m: PromptCountMargin): number => Math.ceil(counted * m.factor) + m.overheadTokens;

/** A running total in dollars, kept to a picodollar (the loop's own rounding). */
export const addUsd = (a: number, b: number): number => Math.round((a + b) * 1e12) / 1e12;

/**
 * What these tokens cost at these prices. Cache-read, cache-write and
 * reasoning tokens are parts of the prompt and completion counts, each at its
 * own rate when the model has one (else at the prompt's or completion's).
 * Usage without them (a provider that reports none) is priced by the plain
 * prompt and completion expression alone, with no zero terms added, so its
 * cost is exactly the two-rate figure.
 */
export function costUsd(usage: Usage, pricing: Pricing): number {
  const read = usage.cacheReadTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  const reasoning = usage.reasoningTokens ?? 0;
  if (read === 0 && write === 0 && reasoning === 0) return (usage.promptTokens * pricing.inputPerMTokUsd + usage.completionTokens * pricing.outputPerMTokUsd) / 1e6;
  // A provider that reports more cached than input tokens is not trusted to make the rest negative.
  const plainPrompt = Math.max(0, usage.promptTokens - read - write);
  const plainCompletion = Math.max(0, usage.completionTokens - reasoning);
  return (
    (plainPrompt * pricing.inputPerMTokUsd +
      read * (pricing.cacheReadPerMTokUsd ?? pricing.inputPerMTokUsd) +
      write * (pricing.cacheWritePerMTokUsd ?? pricing.inputPerMTokUsd) +
      plainCompletion * pricing.outputPerMTokUsd +
      reasoning * (pricing.reasoningPerMTokUsd ?? pricing.outputPerMTokUsd)) /
    1e6
  );
}

/**
 * The prices a hold counts at: a prompt token not yet sent may turn out a
 * cache write (dearer than a plain one at Anthropic's), a reply token a
 * reasoning one; so the worst case takes the dearest of each.
 */
export function worstCasePricing(p: Pricing): Pricing {
  return {
    inputPerMTokUsd: Math.max(p.inputPerMTokUsd, p.cacheReadPerMTokUsd ?? 0, p.cacheWritePerMTokUsd ?? 0),
    outputPerMTokUsd: Math.max(p.outputPerMTokUsd, p.reasoningPerMTokUsd ?? 0),
  };
}

/** What a model call asks of the budget: its spend and holds so far, its cap, and the reply's bounds. */
export interface ReplyBudget {
  /** Spent and held by the run (its turns, its children running) before this call. */
  committedUsd: number;
  /** The run's budget. */
  maxUsd: number;
  pricing: Pricing;
  /** A smaller reply is not worth sending: the run parks instead. */
  minReplyTokens: number;
  /** The most max_tokens the call sends, whatever the budget allows (models refuse more than they can write). */
  maxReplyTokens: number;
}

/** The hold of one model call: the worst case of the prompt counted and the largest reply it pays for. */
export interface ReplyHold {
  promptTokens: number;
  maxTokens: number;
  /** promptTokens at the input price plus maxTokens at the output price. */
  reservedUsd: number;
}

/** Why a call cannot be paid: even the smallest reply worth asking for costs more than is left. */
export interface ReplyShortfall {
  promptTokens: number;
  minReplyTokens: number;
  /** The worst case of the prompt with a minReplyTokens reply. */
  needUsd: number;
  /** How much more budget that takes: a raise to committed + needUsd lets it go on. */
  shortUsd: number;
  /** The smallest budget that pays for it. */
  needBudgetUsd: number;
}

const fits = (committed: number, cost: number, max: number): boolean => addUsd(committed, cost) <= max;

/**
 * The largest max_tokens the budget pays for on top of this prompt, never
 * more than maxReplyTokens; a shortfall when not even minReplyTokens fits.
 */
export function replyAllowance(b: ReplyBudget, countedPromptTokens: number, margin: PromptCountMargin = EXACT_PROMPT_COUNT): { ok: true; hold: ReplyHold } | { ok: false; shortfall: ReplyShortfall } {
  const promptTokens = heldPromptTokens(countedPromptTokens, margin);
  const pricing = worstCasePricing(b.pricing);
  const worst = (maxTokens: number) => costUsd({ promptTokens, completionTokens: maxTokens }, pricing);
  const perToken = pricing.outputPerMTokUsd / 1e6;
  const left = b.maxUsd - addUsd(b.committedUsd, worst(0));
  let maxTokens = perToken === 0 ? b.maxReplyTokens : Math.min(b.maxReplyTokens, Math.max(0, Math.floor(left / perToken)));
  // The float estimate may be a token too generous: step down until the total fits as the run adds it.
  while (maxTokens > 0 && !fits(b.committedUsd, worst(maxTokens), b.maxUsd)) maxTokens -= 1;
  if (maxTokens >= b.minReplyTokens && fits(b.committedUsd, worst(maxTokens), b.maxUsd)) {
    return { ok: true, hold: { promptTokens, maxTokens, reservedUsd: worst(maxTokens) } };
  }
  const needUsd = worst(b.minReplyTokens);
  const needBudgetUsd = ceilUsd(addUsd(b.committedUsd, needUsd));
  return {
    ok: false,
    shortfall: { promptTokens, minReplyTokens: b.minReplyTokens, needUsd, needBudgetUsd, shortUsd: Math.max(0, ceilUsd(needBudgetUsd - b.maxUsd)) },
  };
}

/**
 * How many model calls a suggested raise pays for: the one the run parked on
 * and four more like it. A raise to needBudgetUsd pays for that one call only,
 * so the run parks again a turn later; with this headroom a person is asked
 * again after a few turns, not after every one.
 */
export const SUGGESTED_RAISE_CALLS = 5;

/**
 * The budget to suggest to a person when a run parks: needBudgetUsd plus
 * SUGGESTED_RAISE_CALLS - 1 more calls at this call's worst case (the current
 * rate; later prompts are longer, so it is a few turns, not a promise), up to
 * the next micro-dollar so it prints as typed.
 */
export function suggestedRaiseUsd(s: { needBudgetUsd: number; needUsd: number }, calls = SUGGESTED_RAISE_CALLS): number {
  const usd = addUsd(s.needBudgetUsd, (calls - 1) * s.needUsd);
  return Math.ceil(Math.round(usd * 1e12) / 1e6) / 1e6;
}

/** Up to the next picodollar: a raise to this amount is never a hair short. */
const ceilUsd = (v: number): number => Math.ceil(Math.round(v * 1e15) / 1e3) / 1e12;

/** What a child run is given: its own cap, at most what the parent has neither spent nor holds; 0 when nothing is left. */
export function childReservation(capUsd: number, committedUsd: number, maxUsd: number): number {
  let r = Math.max(0, Math.min(capUsd, Math.floor((maxUsd - committedUsd) * 1e12) / 1e12));
  while (r > 0 && !fits(committedUsd, r, maxUsd)) r = Math.max(0, Math.round((r - 1e-12) * 1e12) / 1e12);
  return r;
}

/**
 * What a reply is charged against the budget: what it reported, at most its
 * hold. A reply cannot write more than max_tokens; one whose usage says it
 * did is a provider fault — its tokens are counted, the excess is flagged and
 * not charged, and the run stops.
 */
export function settleReply(usage: Usage, pricing: Pricing, hold: ReplyHold, turn: number): { chargedUsd: number; over: OverReservation | null } {
  const reportedUsd = costUsd(usage, pricing);
  const overTokens = usage.completionTokens > hold.maxTokens;
  if (!overTokens && reportedUsd <= hold.reservedUsd) return { chargedUsd: reportedUsd, over: null };
  return {
    chargedUsd: Math.min(reportedUsd, hold.reservedUsd),
    over: {
      turn,
      maxTokens: hold.maxTokens,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      reservedUsd: hold.reservedUsd,
      reportedUsd,
      excessUsd: Math.max(0, reportedUsd - hold.reservedUsd),
    },
  };
}
