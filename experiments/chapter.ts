// The chapter's own figures (SPEC §13), printed beside ours.
export const CHAPTER = {
  plan: { turns: 3, tools: 2, in: 815, out: 70, costUsd: 0.00247, ms: 89, perTurn: [204, 269, 342] },
  runawayInputTokens: { 8: 3431, 50: 88649, 100: 337299 } as Record<number, number>,
  runaway20CostUsd: 0.038,
  runaway50to100: { tokens: 3.8, cost: 3.7 },
  budget: { budgetUsd: 0.01, spentUsd: 0.01078 },
  recoverDescribeOverFatal: 4.7,
  forbidden: { turns: 12, toolRuns: 11, in: 7079, costUsd: 0.018622 },
  duplicate: { extraUsd: 0.00105, extraPct: 75 },
  cacheOnWrites: { naive: { turns: 3, toolRuns: 1 }, gate: { turns: 3, toolRuns: 2 } },
  cancel: { noCancelMs: 3015, stoppedAtMs: 1202 },
} as const;
