// What one model call costs at a run's prices. Shared by the workflow and the
// turn-costs activity (activities/turn-costs.ts, which a fork's export reads).
import type { Pricing, Usage } from './contract.js';

// --- money


export function turnCostUsd(usage: Usage, pricing: Pricing): number {
  return (usage.promptTokens * pricing.inputPerMTokUsd + usage.completionTokens * pricing.outputPerMTokUsd) / 1e6;
}
