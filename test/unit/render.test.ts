// The follow output's lines for a person's decision: each decision in its own
// word (never "rejectd"), pure rendering, no server.
import { describe, expect, it } from 'vitest';
import { renderEvent } from '../../client/render.js';
import type { TraceLine } from '../../common/trace-format.js';

const line = (fields: Record<string, unknown>) => ({ ts: '2024-01-01T00:00:00.000Z', ...fields }) as unknown as TraceLine;

describe('renderEvent: approval_decided', () => {
  it('a rejection says rejected, with a cross, and its reason', () => {
    expect(renderEvent(line({ type: 'approval_decided', decision: 'reject', by: 'me', reason: 'not that file' }), 'w')).toBe('  ✘ rejected by me: not that file');
  });
  it('an approval says approved, with a tick', () => {
    expect(renderEvent(line({ type: 'approval_decided', decision: 'approve', by: 'alice' }), 'w')).toBe('  ✔ approved by alice');
  });
});

describe('renderEvent: budget_awaited', () => {
  it('suggests a raise with room for five calls like the one parked on, not the bare need', () => {
    const text = renderEvent(line({ type: 'budget_awaited', needUsd: 0.001, needBudgetUsd: 0.004123, shortUsd: 0.000123, maxBudgetUsd: 0.004, costUsd: 0.0031, promptTokens: 300, minReplyTokens: 256 }), 'w');
    expect(text?.split('\n')[1]).toBe('    raise: bin/agent-harness.mjs raise-budget w --to 0.008123 --reason "…"   (room for 5 calls like this one; at least $0.004123 pays for this one only)');
  });
});
