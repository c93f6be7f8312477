// A refused update (its validator said no) as ops tooling meets it through the
// real `temporal` CLI: the reason, typed UpdateRefused and not retryable, for
// each of the four updates a person sends (decide, steer, raiseBudget, reconcile).
import { describe, expect, it } from 'vitest';
import { cancelSignal } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitForApproval } from './helpers/harness.js';
import { temporalCli } from './helpers/temporal-cli.js';

const h = useHarness();

describe('update refusals through the temporal CLI', () => {
  it('decide, steer, raiseBudget, reconcile: refused with the reason, type UpdateRefused, not retryable', { timeout: 120_000 }, async () => {
    const handle = await h.start({ task: 'Free some space.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    const refusals: [string, unknown, string][] = [
      ['decide', { callId: 'c9', decision: 'approve', by: 'alice' }, 'c9'],
      ['steer', { message: '', by: 'alice' }, 'message'],
      ['raiseBudget', { maxBudgetUsd: 5, by: 'alice' }, 'soft budget'],
      ['reconcile', { callId: 'c9', outcome: 'retry', by: 'alice' }, 'c9'],
    ];
    for (const [name, input, words] of refusals) {
      const r = await temporalCli(h.address, 'workflow', 'update', 'execute', '--workflow-id', handle.workflowId, '--name', name, '--input', JSON.stringify(input));
      const said = `${r.stderr}${r.stdout}`;
      expect(r.code, name).not.toBe(0);
      expect(said, name).toContain(words);
      expect(said, name).toContain('UpdateRefused');
      expect(said, name).not.toMatch(/retryable"?:\s*true/i);
    }
    await handle.signal(cancelSignal, { reason: 'done' });
    await handle.result();
  });
});
