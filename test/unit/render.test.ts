// The follow output's lines for a person's decision: each decision in its own
// word (never "rejectd"), pure rendering, no server.
import { describe, expect, it } from 'vitest';
import { renderEvent, setHintTarget, temporalHint } from '../../client/render.js';
import type { TraceLine } from '../../node/trace-format.js';

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
    expect(text?.split('\n')[1]).toBe('    raise: npx agent-harness raise-budget w --to 0.008123 --reason "…"   (room for 5 calls like this one; at least $0.004123 pays for this one only)');
  });
});

describe('hints: commands that exist where the CLI runs (issue 34, 5a)', () => {
  const parked = line({ type: 'approval_required', toolName: 'delete_file', args: { path: 'a.log' }, callId: 'c2', argsHash: 'ab'.repeat(32) });
  it('name npx agent-harness and the temporal CLI on the PATH, never the repository\'s bin/ or .temporal/', () => {
    setHintTarget({ address: 'localhost:7233', namespace: 'default' });
    const text = renderEvent(parked, 'w') ?? '';
    expect(text).not.toMatch(/bin\/agent-harness\.mjs|\.temporal\/bin/);
    expect(text.split('\n').slice(1)).toEqual([
      `    approve: npx agent-harness approve w c2 --args-hash ${'ab'.repeat(32)}`,
      '    reject:  npx agent-harness reject w c2 --reason "…"',
      `    or:      temporal workflow signal -w w --name approve --input '{"callId":"c2","by":"you"}'`,
    ]);
    const reconcile = renderEvent(line({ type: 'reconciliation_required', toolName: 'pay', callId: 'c3', known: 'x' }), 'w') ?? '';
    expect(reconcile).toContain('it happened: npx agent-harness reconcile w c3 --happened');
    expect(reconcile).toContain('try again:   npx agent-harness reconcile w c3 --retry');
  });
  it('the temporal hint carries --address and --namespace when they are not the Temporal CLI\'s defaults', () => {
    setHintTarget({ address: '127.0.0.1:7655', namespace: 'team-a' });
    expect(renderEvent(parked, 'w')?.split('\n')[3]).toBe(`    or:      temporal --address 127.0.0.1:7655 --namespace team-a workflow signal -w w --name approve --input '{"callId":"c2","by":"you"}'`);
    expect(temporalHint({ address: '127.0.0.1:7233', namespace: 'default' })).toBe('temporal');
    expect(temporalHint({ address: 'temporal.internal:7233', namespace: 'default' })).toBe('temporal --address temporal.internal:7233');
    setHintTarget(null);
  });
});

describe('renderEvent: a run waiting out an outage says so (issue 34)', () => {
  it('model_waiting and model_recovered are lines, not silence', () => {
    expect(renderEvent(line({ type: 'model_waiting', tries: 2, errorType: 'ProviderUnavailable', error: 'HTTP 503', waitMs: 60000, nextTryAt: '2026-01-01T00:01:00.000Z', giveUpAt: '2026-01-01T06:00:00.000Z' }), 'w')).toBe(
      '  ⏳ waiting out a model provider outage: 2 tries failed, last ProviderUnavailable: HTTP 503; next try at 2026-01-01T00:01:00.000Z, gives up at 2026-01-01T06:00:00.000Z',
    );
    expect(renderEvent(line({ type: 'model_recovered', tries: 3, waitedMs: 120400 }), 'w')).toBe('  ✔ model provider back after 120 s (3 tries)');
    expect(renderEvent(line({ type: 'tool_waiting', toolName: 'research', callId: 'c4', tries: 1, errorType: 'ToolUnavailable', error: 'down', nextTryAt: 'a', giveUpAt: 'b' }), 'w')).toMatch(/^ {2}⏳ waiting out the tool research \(call c4\) outage: 1 try failed/);
  });
});
