// A reply without a `usage` field is not free: the model activity prices it
// from the harness's own token count (o200k_base, as the scripted provider
// counts), flags it in the trace, the status and the result, and the budget
// stops the run as it would with reported usage.
import { describe, expect, it } from 'vitest';
import { statusQuery } from '../common/run-messages.js';
import { addFault, marker, useHarness } from './helpers/harness.js';

const h = useHarness();

describe('a provider that sends no usage', () => {
  it('every turn is priced from our own count, flagged, and the budget still stops the run', async () => {
    const limits = { maxTurns: 30, maxBudgetUsd: 0.004 };
    // One task for both runs: the fault is added only after the first has ended,
    // and two random markers can differ by more tokens than the bound below allows.
    const m = marker();
    const reported = await h.run({ task: `List the files. ${m}`, model: 'runaway', dedupe: 'off', limits });
    await addFault(h.providerUrl, { match: { taskIncludes: m }, fault: { type: 'no_usage' }, times: 100 });
    const handle = await h.start({ task: `List the files. ${m}`, model: 'runaway', dedupe: 'off', limits });
    const r = await handle.result();
    // Without the fallback the run would spend nothing and stop only at its turn cap.
    expect(r).toMatchObject({ status: 'budget_exceeded', turns: reported.turns, usageEstimatedTurns: reported.turns });
    expect(r.turns).toBeLessThan(limits.maxTurns);
    // Our count is the provider's own arithmetic: the transcript grows by the same
    // tokens each turn.
    const growth = (xs: number[]) => xs.slice(1).map((x, i) => x - xs[i]);
    expect(growth(r.promptTokensPerTurn)).toEqual(growth(reported.promptTokensPerTurn));
    r.promptTokensPerTurn.forEach((n, i) => expect(Math.abs(n - reported.promptTokensPerTurn[i])).toBeLessThanOrEqual(2));
    expect(r.usage.completionTokens).toBe(reported.usage.completionTokens);
    expect(reported.usageEstimatedTurns).toBe(0);
    expect(h.events(handle.workflowId).filter((l) => l.type === 'turn').every((l) => l.usageEstimated === true)).toBe(true);
    expect(await handle.query(statusQuery)).toMatchObject({ usageEstimatedTurns: r.turns });
  });
});
