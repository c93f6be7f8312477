// The approval desk's rules, without Temporal.
import { describe, expect, it } from 'vitest';
import { ApprovalDesk } from '../workflows/approvals';

const parked = () => {
  const desk = new ApprovalDesk();
  desk.awaiting = { key: 'run/m3/c2', callId: 'c2', toolName: 'delete_file', args: { path: 'access.log' } };
  return desk;
};

describe('ApprovalDesk', () => {
  it('takes a decision for the awaited call only, keyed by the call idempotency key', () => {
    const desk = parked();
    expect(desk.take({ callId: 'c2', reason: ' ', by: 'alice' }, 'approve')).toMatchObject({
      ok: true,
      decision: { decision: 'approve', reason: null, by: 'alice' },
    });
    expect(desk.decisions).toEqual({ 'run/m3/c2': { callId: 'c2', decision: 'approve', reason: null, by: 'alice' } });
  });

  it.each([
    [{ callId: 'c9' }, 'approve', 'call "c9" is not awaiting a decision; "c2" is'],
    [{}, 'approve', 'callId must be a string'],
    ['c2', 'approve', 'callId must be a string'],
    [null, 'reject', 'callId must be a string'],
    [{ callId: 5 }, 'reject', 'callId must be a string'],
    [{ callId: 'c2' }, 'maybe', 'decision must be "approve" or "reject", got "maybe"'],
  ])('refuses %j / %j: %s', (input, verdict, problem) => {
    const desk = parked();
    expect(desk.take(input, verdict)).toEqual({ ok: false, problem });
    expect(desk.decisions).toEqual({});
  });

  it('refuses everything while nothing is awaited', () => {
    expect(new ApprovalDesk().problem({ callId: 'c2' }, 'approve')).toBe('no call is awaiting a decision (got callId "c2")');
  });

  it('the first decision is final: a second one in the same activation is refused, whatever its verdict', () => {
    const desk = parked();
    expect(desk.take({ callId: 'c2', reason: 'audit', by: 'bob' }, 'reject')).toMatchObject({ ok: true });
    // The loop has not resumed yet: the call still looks awaited.
    expect(desk.awaiting?.callId).toBe('c2');
    expect(desk.take({ callId: 'c2', by: 'mallory' }, 'approve')).toEqual({
      ok: false,
      problem: 'already decided: call "c2" was rejected by bob; the first decision is final',
    });
    expect(desk.take({ callId: 'c2' }, 'reject')).toMatchObject({ ok: false });
    expect(desk.decisions['run/m3/c2']).toMatchObject({ decision: 'reject', by: 'bob' });
    // Once the loop moved on, the answer stays "already decided", not "nothing awaited".
    desk.awaiting = null;
    expect(desk.problem({ callId: 'c2' }, 'approve')).toMatch(/^already decided/);
  });
});
