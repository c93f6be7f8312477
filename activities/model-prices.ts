// The models a worker knows the price of: the scripted provider's scenarios
// at the worker's default prices (runDefaults.pricing, else $2 in, $12 out
// per million tokens), and whatever the deployment lists in
// AGENT_MODEL_PRICES (AgentPlugin's modelPrices), where a `"*"` entry prices
// every model it does not list. A run with a USD budget refuses a model that
// has no price (common/input.ts): its spend could not be bounded.
import { SCRIPTED_MODELS } from '../common/scripted-models.js';
import { DEFAULT_PRICING } from '../common/defaults.js';
import type { Pricing } from '../common/contract.js';

/** The entry of a price list that prices every model it does not list. */
export const ANY_MODEL = '*';

export function modelPrices(configured: Readonly<Record<string, Pricing>> = {}, scriptedAt: Pricing = DEFAULT_PRICING): Record<string, Pricing> {
  const scripted = Object.fromEntries(SCRIPTED_MODELS.map((name) => [name, scriptedAt]));
  return { ...scripted, ...configured };
}

/** `model`'s price in `prices`: its own entry, else the `"*"` entry, else null (no price). */
export function priceIn(prices: Readonly<Record<string, Pricing>>, model: string): Pricing | null {
  if (Object.hasOwn(prices, model)) return prices[model];
  return Object.hasOwn(prices, ANY_MODEL) ? prices[ANY_MODEL] : null;
}
