// A tool result of one long unbroken string (a minified file, a log of one
// character) used to freeze the worker: the token counter was quadratic in
// such a piece, and a hard budget counts every prompt in the worker. Now the
// run reads it, counts it and goes on, and another run's queries on the same
// worker answer meanwhile.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { statusQuery } from '../common/run-messages.js';
import { freshWorkspace, marker, useHarness, waitForApproval } from './helpers/harness.js';

const h = useHarness();

describe('a 60,000-character unbroken tool result', () => {
  it.each([
    ['one letter', 'x'.repeat(60_000)],
    ['CJK', '的'.repeat(20_000)],
  ])('%s: a hard-budget run counts it and completes; another run on the worker answers its queries meanwhile', async (_name, text) => {
    const parked = await h.start({ task: `Clean up. ${marker()}`, model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(parked, 'c2');

    const ws = freshWorkspace();
    mkdirSync(join(h.workspaceRoot, ws), { recursive: true });
    writeFileSync(join(h.workspaceRoot, ws, 'big.txt'), text);
    const script = JSON.stringify([[{ name: 'read_file', args: { path: 'big.txt' } }]]);
    const big = await h.start({
      task: `Read it. ${marker()} script: ${script}`,
      model: 'script',
      workspace: ws,
      maxToolResultChars: 100_000,
      limits: { maxTurns: 5, maxBudgetUsd: 1, budgetMode: 'hard' },
    });
    // Queries of the parked run, one after another, until the big run ends: each must answer.
    let done = false;
    const slowest = { ms: 0 };
    const probing = (async () => {
      while (!done) {
        const t = Date.now();
        expect((await parked.query(statusQuery)).agentStatus).toBe('awaiting_approval');
        slowest.ms = Math.max(slowest.ms, Date.now() - t);
      }
    })();
    const r = await big.result();
    done = true;
    await probing;
    expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
    // The second turn's prompt holds the whole result: thousands of tokens, counted exactly by the provider and the hold alike.
    expect(r.promptTokensPerTurn[1] - r.promptTokensPerTurn[0]).toBeGreaterThan(text.length / 20);
    // Generous for a loaded 2-core machine: a frozen worker failed these after 31 s.
    expect(slowest.ms).toBeLessThan(10_000);
    await parked.cancel();
  }, 180_000);
});
