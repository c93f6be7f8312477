// The approval desk's rules, without Temporal.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApprovalRules } from '../../workflows/approval-rules.js';
import { argsHash, canonicalJson } from '../../common/args-hash.js';

const HASH = argsHash({ path: 'access.log' });

const parked = () => {
  const desk = new ApprovalRules();
  desk.awaiting = { key: 'run/m3/c2', callId: 'c2', toolName: 'delete_file', args: { path: 'access.log' }, argsHash: HASH, hashRequired: false };
  return desk;
};

describe('ApprovalRules', () => {
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
    expect(new ApprovalRules().problem({ callId: 'c2' }, 'approve')).toBe('no call is awaiting a decision (got callId "c2")');
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

describe('argsHash: a decision bound to the arguments it was made about', () => {
  it('is SHA-256 hex of the canonical JSON (keys sorted at every depth), as sha256sum computes it', () => {
    expect(canonicalJson({ b: [1, { d: 'x', c: null }], a: 'é' })).toBe('{"a":"é","b":[1,{"c":null,"d":"x"}]}');
    expect(argsHash({ path: 'access.log' })).toBe(createHash('sha256').update('{"path":"access.log"}').digest('hex'));
    expect(argsHash({ b: 1, a: 2 })).toBe(argsHash({ a: 2, b: 1 }));
    expect(argsHash({ path: 'access.log' })).not.toBe(argsHash({ path: 'access.log ' }));
  });

  it('takes a decision naming the call own hash, in either case', () => {
    expect(parked().take({ callId: 'c2', argsHash: HASH, by: 'alice' }, 'approve')).toMatchObject({ ok: true, decision: { argsHash: HASH } });
    expect(parked().take({ callId: 'c2', argsHash: HASH.toUpperCase() }, 'approve')).toMatchObject({ ok: true });
  });

  it('refuses a decision naming other arguments, naming both hashes', () => {
    const other = argsHash({ path: 'errors.log' });
    const desk = parked();
    const taken = desk.take({ callId: 'c2', argsHash: other, by: 'alice' }, 'approve');
    expect(taken).toMatchObject({ ok: false, problem: expect.stringContaining(`hashing to ${other}, but call "c2" (delete_file) has arguments hashing to ${HASH}`) });
    expect(desk.decisions).toEqual({});
    expect(desk.problem({ callId: 'c2', argsHash: 7 }, 'reject')).toBe('argsHash must be a string of 64 hex digits, got 7');
  });

  it('a tool that requires the hash: approve without it is refused, reject without it is taken', () => {
    const desk = parked();
    desk.awaiting = { ...desk.awaiting!, hashRequired: true };
    expect(desk.problem({ callId: 'c2', by: 'alice' }, 'approve')).toMatch(/^argsHash required: approving delete_file needs the call's argsHash/);
    expect(desk.take({ callId: 'c2', by: 'bob' }, 'reject')).toMatchObject({ ok: true });
  });
});
