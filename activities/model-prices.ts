// The models a worker knows the price of: the scripted provider's scenarios
// at the default prices ($2 in, $12 out per million tokens), and whatever
// the deployment lists in AGENT_MODEL_PRICES. A hard budget refuses a model
// that is in neither: its spend could not be bounded.
import { SCRIPTED_MODELS } from '../common/scripted-models.js';
import { DEFAULT_PRICING } from '../common/defaults.js';
import type { Pricing } from '../common/contract.js';

export function modelPrices(configured: Readonly<Record<string, Pricing>> = {}): Record<string, Pricing> {
  const scripted = Object.fromEntries(SCRIPTED_MODELS.map((name) => [name, DEFAULT_PRICING]));
  return { ...scripted, ...configured };
}
