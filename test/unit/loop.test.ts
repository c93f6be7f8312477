// The pure loop decisions, without Temporal: microseconds each.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cacheKey, firstPendingCall, isCacheable, parseCall } from '../../workflows/tool-calls.js';
import { declinedText, toolErrorText } from '../../common/transcript-text.js';
import { exitFields, type Exit } from '../../workflows/exits.js';
import { limitExit, replyProtocolProblem } from '../../workflows/next-step.js';
import { initialState, recordSpend, rememberResult } from '../../workflows/run-state.js';
import { turnCostUsd } from '../../common/turn-cost.js';
import type { ChatMessage, ModelReply, ToolCall } from '../../common/contract.js';
import { parseBuiltin, specs } from '../helpers/builtin-specs.js';
import { propertyParams } from '../helpers/property.js';

const call = (id: string, name = 'list_files', args = '{}'): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });
const cfg = (extra: object = {}) => parseBuiltin({ task: 't', ...extra });

describe('firstPendingCall', () => {
  it('finds the first call of the last assistant message without a result', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 't' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b'), call('c')] },
      { role: 'tool', tool_call_id: 'a', name: 'list_files', content: 'x' },
    ];
    expect(firstPendingCall(messages)).toEqual({ call: call('b'), messageIndex: 1 });
    messages.push({ role: 'tool', tool_call_id: 'b', name: 'list_files', content: 'x' }, { role: 'tool', tool_call_id: 'c', name: 'list_files', content: 'x' });
    expect(firstPendingCall(messages)).toBeNull();
  });

  it('has nothing pending after an answer or at the start', () => {
    expect(firstPendingCall([{ role: 'user', content: 't' }])).toBeNull();
    expect(firstPendingCall([{ role: 'user', content: 't' }, { role: 'assistant', content: 'done' }])).toBeNull();
  });
});

describe('limitExit', () => {
  it('stops on the turn cap before the budget, and on the budget when spent exactly', () => {
    const s = initialState(cfg({ limits: { maxTurns: 2, maxBudgetUsd: 0.01 } }));
    expect(limitExit(s, cfg({ limits: { maxTurns: 2, maxBudgetUsd: 0.01 } }))).toBeNull();
    s.turns = 2;
    s.costUsd = 0.02;
    expect(limitExit(s, cfg({ limits: { maxTurns: 2, maxBudgetUsd: 0.01 } }))?.status).toBe('max_turns_exceeded');
    s.turns = 1;
    s.costUsd = 0.01;
    expect(limitExit(s, cfg({ limits: { maxTurns: 2, maxBudgetUsd: 0.01 } }))).toMatchObject({ status: 'budget_exceeded', interruption: { type: 'max_budget' } });
  });

  it('a null cap is no cap', () => {
    const c = cfg({ limits: { maxTurns: null, maxBudgetUsd: 1 } });
    const s = initialState(c);
    s.turns = 10_000;
    expect(limitExit(s, c)).toBeNull();
  });
});

describe('money', () => {
  it('prices prompt and completion tokens separately, per million', () => {
    expect(turnCostUsd({ promptTokens: 1_000_000, completionTokens: 0 }, { inputPerMTokUsd: 2, outputPerMTokUsd: 12 })).toBe(2);
    expect(turnCostUsd({ promptTokens: 204, completionTokens: 23 }, { inputPerMTokUsd: 2, outputPerMTokUsd: 12 })).toBeCloseTo(0.000684, 12);
  });

  it('recordSpend counts the turn, tokens and cost but does not append the message', () => {
    const s = initialState(cfg());
    const reply: ModelReply = { message: { role: 'assistant', content: 'hi' }, usage: { promptTokens: 10, completionTokens: 5 }, finishReason: 'stop' };
    recordSpend(s, reply, { inputPerMTokUsd: 2, outputPerMTokUsd: 12 });
    expect(s).toMatchObject({ turns: 1, usage: { promptTokens: 10, completionTokens: 5 }, promptTokensPerTurn: [10] });
    expect(s.costUsd).toBeCloseTo(80e-6, 15);
    expect(s.messages).toHaveLength(1);
  });
});

describe('replies that break the protocol', () => {
  const history: ChatMessage[] = [{ role: 'user', content: 't' }, { role: 'assistant', content: null, tool_calls: [call('c1')] }];
  const reply = (calls: ToolCall[]): ModelReply => ({ message: { role: 'assistant', content: null, tool_calls: calls }, usage: { promptTokens: 1, completionTokens: 1 }, finishReason: 'tool_calls' });
  it('refuses an empty id and an id used twice in one reply; an id an earlier turn used is accepted', () => {
    expect(replyProtocolProblem([], reply([call('')]))).toMatch(/without an id/);
    expect(replyProtocolProblem([], reply([call('x'), call('x')]))).toMatch(/reused/);
    // An id an earlier turn used is the provider's habit, not a break: calls are named by occurrence.
    expect(replyProtocolProblem(history, reply([call('c1')]))).toBeNull();
    expect(replyProtocolProblem(history, reply([call('c2'), call('c3')]))).toBeNull();
  });
});

describe('parseCall', () => {
  it('names unknown or disabled tools and lists the available ones', () => {
    const r = parseCall(call('a', 'rm_rf'), specs('list_files', 'read_file'));
    expect(r).toEqual({ ok: false, toolName: 'rm_rf', error: 'unknown tool "rm_rf". Available tools: list_files, read_file.' });
    expect(parseCall(call('a', 'delete_file', '{"path":"x"}'), specs('list_files')).ok).toBe(false);
  });
  it('reports malformed or non-object JSON arguments in words the model can act on', () => {
    expect(parseCall(call('a', 'read_file', '{"path":'), specs('read_file'))).toMatchObject({ ok: false, error: expect.stringContaining('not valid JSON') });
    expect(parseCall(call('a', 'read_file', '[1]'), specs('read_file'))).toMatchObject({ ok: false, error: expect.stringContaining('JSON object') });
    expect(parseCall(call('a', 'read_file', '{"path":"e"}'), specs('read_file'))).toEqual({ ok: true, toolName: 'read_file', spec: specs('read_file')[0], args: { path: 'e' } });
  });
});

describe('the cache', () => {
  it('caches read-only tools under readOnly, everything under all, nothing under off', () => {
    expect(isCacheable(specs('read_file')[0], 'readOnly')).toBe(true);
    expect(isCacheable(specs('delete_file')[0], 'readOnly')).toBe(false);
    expect(isCacheable(specs('delete_file')[0], 'all')).toBe(true);
    expect(isCacheable(specs('read_file')[0], 'off')).toBe(false);
  });
  it('keys on tool and arguments, ignoring key order', () => {
    expect(cacheKey('t', { a: 1, b: [2, { d: 1, c: 2 }] })).toBe(cacheKey('t', { b: [2, { c: 2, d: 1 }], a: 1 }));
    expect(cacheKey('t', { a: 1 })).not.toBe(cacheKey('u', { a: 1 }));
  });
});

describe('the bounded cache', () => {
  it('never holds more than its bound (unless one result alone is larger), always keeps the newest, and drops the oldest first', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 300 })), { maxLength: 60 }), fc.integer({ min: 1, max: 1000 }), (puts, max) => {
        const s = initialState(cfg());
        const order: string[] = [];
        for (const [k, len] of puts) {
          const key = `read_file:${k}`;
          rememberResult(s, key, 'x'.repeat(len), max);
          if (order.includes(key)) order.splice(order.indexOf(key), 1);
          order.push(key);
          const total = Object.values(s.cache).reduce((n, v) => n + v.length, 0);
          expect(s.cache[key]).toHaveLength(len);
          if (Object.keys(s.cache).length > 1) expect(total).toBeLessThanOrEqual(max);
          // What is left is the newest of what was put, in the order it was put.
          expect(Object.keys(s.cache)).toEqual(order.slice(order.length - Object.keys(s.cache).length));
        }
      }),
      propertyParams(),
    );
  });
});

describe('transcript wording', () => {
  it('describe passes the error on; generic hides it', () => {
    expect(toolErrorText('no such file: x', 'describe')).toBe('Error: no such file: x');
    expect(toolErrorText('no such file: x', 'generic')).toBe('Error: the tool failed.');
  });
  it('a declined call says so, by whom and why, or that no reason was given', () => {
    expect(declinedText('delete_file', { decision: 'reject', reason: 'audit', by: 'bob' })).toBe(
      'The user declined this delete_file call by bob; it was not run and nothing changed. Reason: audit',
    );
    expect(declinedText('delete_file', { decision: 'reject', reason: null, by: null })).toContain('No reason was given.');
  });
});

describe('exits', () => {
  it('a completed exit cannot carry an interruption or an error, a failed one always has its type', () => {
    // @ts-expect-error: completed with an interruption does not type-check
    const bad: Exit = { status: 'completed', interruption: { type: 'max_turns' }, reason: 'x', output: 'y' };
    // @ts-expect-error: failed without its errorType does not type-check
    const bad2: Exit = { status: 'failed', interruption: null, reason: 'x', error: 'y' };
    expect([bad.status, bad2.status]).toEqual(['completed', 'failed']);
    expect(exitFields({ status: 'completed', interruption: null, reason: 'answered', output: 'hi' })).toEqual({ output: 'hi', error: null, errorType: null });
    expect(exitFields({ status: 'failed', interruption: null, reason: 'r', error: 'e', errorType: 'ToolError' })).toEqual({ output: null, error: 'e', errorType: 'ToolError' });
    expect(exitFields({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'stop' }, reason: 'stop' })).toEqual({ output: null, error: null, errorType: null });
  });
});
