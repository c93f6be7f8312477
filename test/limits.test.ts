// The harness's own exits: the turn cap and the budget, checked before each
// model call, with the overshoot bounded by one turn.
import { describe, expect, it } from 'vitest';
import { turnCostUsd } from '../common/turn-cost.js';
import { DEFAULT_PRICING } from '../common/defaults.js';
import { useHarness } from './helpers/harness.js';

const h = useHarness();
const task = 'Keep listing files.';

describe('runaway scenario', () => {
  it.each([8, 20])('stops at a turn cap of %i with max_turns_exceeded', async (cap) => {
    const handle = await h.start({ task, model: 'runaway', limits: { maxTurns: cap, maxBudgetUsd: null } });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'max_turns_exceeded', interruption: { type: 'max_turns' }, turns: cap, toolRuns: 1, output: null });
    // The read-only cache served every repeat of list_files {} after the first run.
    const results = h.trace(handle.workflowId).filter((l) => l.type === 'tool_result');
    expect(results).toHaveLength(cap);
    expect(results.filter((l) => l.cached)).toHaveLength(cap - 1);
    expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'max_turns_exceeded', turns: cap });
  });

  it('runs every tool call when dedupe is off, and tokens grow faster than turns', async () => {
    const r8 = await h.run({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: 8 } });
    const r16 = await h.run({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: 16 } });
    expect(r8.toolRuns).toBe(8);
    expect(r16.toolRuns).toBe(16);
    // Each turn resends the whole transcript: twice the turns, more than twice the tokens.
    expect(r16.usage.promptTokens / r8.usage.promptTokens).toBeGreaterThan(2.5);
  });

  it('stops on budget with no turn cap, overshooting by less than one turn', async () => {
    const budget = 0.01;
    const handle = await h.start({ task, model: 'runaway', limits: { maxTurns: null, maxBudgetUsd: budget } });
    const r = await handle.result();
    expect(r.status).toBe('budget_exceeded');
    expect(r.interruption).toEqual({ type: 'max_budget' });
    expect(r.costUsd).toBeGreaterThanOrEqual(budget);
    const turns = h.trace(handle.workflowId).filter((l) => l.type === 'turn');
    const last = turns.at(-1)!;
    const lastTurnCost = turnCostUsd({ promptTokens: Number(last.prompt_tokens), completionTokens: Number(last.completion_tokens) }, DEFAULT_PRICING);
    expect(r.costUsd - budget).toBeLessThan(lastTurnCost);
    // One turn earlier the budget was not yet spent: the check ran before the call, not after.
    expect(r.costUsd - lastTurnCost).toBeLessThan(budget);
    expect(r.turns).toBe(turns.length);
  });
});
