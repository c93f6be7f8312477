// What one model call costs at a run's prices. Shared by the workflow and the
// turn-costs activity (activities/turn-costs.ts, which a fork's export reads).
import type { Pricing, Usage } from './contract.js';
import { costUsd } from './budget-math.js';

// --- money

/** One formula for the loop and `agent-harness costs`: cache and reasoning tokens at their own rates (./budget-math.ts). */
export function turnCostUsd(usage: Usage, pricing: Pricing): number {
  return costUsd(usage, pricing);
}
