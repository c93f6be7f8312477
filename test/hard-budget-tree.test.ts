// The hard budget's promise, as a property over generated trees of runs:
// a parent that starts one to three research sub-agents side by side, each
// child taking a generated number of turns, some continuing as new after
// every turn, a provider that lies about usage here and there, a Stop that
// may land while children run. Whatever happens, no run of the tree spends
// more than its budget — the parent's total (its own turns and every
// child's spend) included — not by a picodollar, and no reply is charged
// more than its hold. Each case is a real tree of workflows on the real
// server and the scripted provider: the run count is small on purpose.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TraceLine } from '../node/trace-format.js';
import { cancelSignal } from '../common/run-messages.js';
import { marker, useHarness, waitFor } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness();
const RUNS = Number(process.env.HARD_BUDGET_TREE_RUNS ?? 8);

interface ChildPlan {
  turns: number;
  overbill: boolean;
}

interface TreePlan {
  children: ChildPlan[];
  budgetUsd: number;
  minReplyTokens: number;
  stopMidChild: boolean;
  continueAsNew: boolean;
  parentOverbill: boolean;
}

/** The `tree` scenario's task (dev/provider/scenarios.ts): one research child per item, side by side. */
function parentTask(plan: TreePlan, m: string): string {
  const items = plan.children.map((c, i) => `c${i}t${c.turns}${c.overbill ? 'o' : ''}`);
  return `tree:${items.join(',')}${plan.parentOverbill ? ' P' : ''} ${m}`;
}

const planArb: fc.Arbitrary<TreePlan> = fc.record({
  children: fc.array(fc.record({ turns: fc.integer({ min: 0, max: 6 }), overbill: fc.integer({ min: 0, max: 3 }).map((n) => n === 0) }), { minLength: 1, maxLength: 3 }),
  // Budgets a few child turns exhaust: the holds, not luck, must keep the tree inside them.
  budgetUsd: fc.integer({ min: 10, max: 150 }).map((n) => n / 10_000),
  minReplyTokens: fc.constantFrom(16, 64, 128),
  stopMidChild: fc.boolean(),
  continueAsNew: fc.boolean(),
  parentOverbill: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
});

/** Every reply of a run: charged at most its hold, and within max_tokens unless flagged. */
function checkTurns(lines: TraceLine[]): void {
  const flagged = new Set(lines.filter((l) => l.type === 'usage_over_reservation').map((l) => Number(l.turn)));
  for (const t of lines.filter((l) => l.type === 'turn')) {
    expect(Number(t.chargedUsd)).toBeLessThanOrEqual(Number(t.heldUsd));
    if (!flagged.has(Number(t.turn))) expect(Number(t.completion_tokens)).toBeLessThanOrEqual(Number(t.maxTokens));
  }
}

describe('hard budget over generated trees', () => {
  it(
    'property: no run of the tree spends more than its budget, the parent counting every child',
    async () => {
      const seen = { cases: 0, children: 0, stopped: 0, continuedAsNew: 0, overbilled: 0, parked: 0 };
      await fc.assert(
        fc.asyncProperty(planArb, async (plan) => {
          const m = marker();
          const handle = await h.start({
            task: parentTask(plan, m),
            model: 'tree',
            tools: ['research', 'list_files'],
            limits: { maxTurns: 8, maxBudgetUsd: plan.budgetUsd, budgetMode: 'hard', minReplyTokens: plan.minReplyTokens, maxReplyTokens: 512 },
            budgetTimeoutMs: 20,
            ...(plan.continueAsNew ? { continueAsNewAtHistoryBytes: 1 } : {}),
          });
          const id = handle.workflowId;
          const childIds = plan.children.map((_, i) => `${id}/m1/r${i}/research`);
          let done = false;
          const result = (handle.result()).finally(() => (done = true));
          if (plan.stopMidChild) {
            // A Stop as soon as some child has taken a turn (or the run is over: then it changes nothing).
            await waitFor('a child turn or the end', () => done || childIds.some((c) => h.events(c).some((l) => l.type === 'turn')));
            await handle.signal(cancelSignal, { reason: 'stop mid-child' }).catch(() => undefined);
          }
          const r = await result;
          seen.cases += 1;
          if (r.status === 'interrupted') seen.stopped += 1;
          // The promise: the whole tree's spend, as the parent counts it, within the budget.
          expect(r.costUsd).toBeLessThanOrEqual(plan.budgetUsd);
          expect(r.budget).toMatchObject({ mode: 'hard', maxBudgetUsd: plan.budgetUsd, heldUsd: 0 });
          const events = h.events(id);
          checkTurns(events);
          if (events.some((l) => l.type === 'budget_awaited')) seen.parked += 1;
          if (r.usageOverReservation) seen.overbilled += 1;
          // Side by side: every child's hold was taken and it started before any child's result came back.
          const research = events.filter((l) => l.toolName === 'research' && (l.type === 'tool_start' || l.type === 'tool_result'));
          const firstResult = research.findIndex((l) => l.type === 'tool_result');
          if (firstResult >= 0) expect(research.slice(firstResult).some((l) => l.type === 'tool_start')).toBe(false);
          // Each child that started: within the budget its parent held for it, which its parent counted.
          let childSpend = 0;
          for (const start of events.filter((l) => l.type === 'tool_start' && l.toolName === 'research')) {
            const childId = `${id}/m1/${String(start.callId)}/research`;
            const child = await h.client.workflow.getHandle<typeof agentRun>(childId).result();
            seen.children += 1;
            const held = Number(start.budgetUsd);
            expect(child.costUsd).toBeLessThanOrEqual(held);
            expect(child.budget?.maxBudgetUsd).toBe(held);
            const childEvents = h.events(childId);
            checkTurns(childEvents);
            if (childEvents.some((l) => l.type === 'continued_as_new')) seen.continuedAsNew += 1;
            if (child.usageOverReservation) seen.overbilled += 1;
            childSpend += child.costUsd;
          }
          expect(r.children.costUsd).toBeCloseTo(childSpend, 12);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      console.log(`hard budget trees: ${JSON.stringify(seen)}`);
    },
    RUNS * 90_000,
  );
});
