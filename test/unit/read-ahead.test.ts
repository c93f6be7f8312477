// Read-ahead's promises as properties over generated replies and runs (pure
// code, no Temporal): the key a call is read ahead under is the key the loop
// gives that call; an outcome is handed to the call it was read for, once,
// and never to a call of another reply; only tools the loop would run as
// local activities without asking anyone are named to the model call; and the
// cache digests name exactly what the cache answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReadAheadOutcome } from '../../common/activity-contract.js';
import { cacheKeyDigest } from '../../common/args-hash.js';
import type { ModelReply, ToolCall } from '../../common/contract.js';
import { cachedDigest } from '../../common/parse-call.js';
import { readsAhead, type ToolSpec } from '../../common/tool-spec.js';
import { takeReply } from '../../workflows/next-step.js';
import { MAX_CACHED_DIGESTS, ReadAheadResults } from '../../workflows/read-ahead.js';
import { initialState, rememberResult } from '../../workflows/run-state.js';
import { cacheKey, idempotencyKey } from '../../workflows/tool-calls.js';
import { BUILTIN_SPECS as specs, parseBuiltin } from '../helpers/builtin-specs.js';
import { propertyParams } from '../helpers/property.js';

const params = propertyParams();
const ids = { workflowId: 'wf-1', chainId: 'chain-1', effectsChainId: 'effects-1' };
const call = (id: string, name: string, args: object = {}): ToolCall => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
const reply = (calls: ToolCall[]): ModelReply => ({ message: { role: 'assistant', content: null, tool_calls: calls }, usage: { promptTokens: 10, completionTokens: 5 }, finishReason: 'tool_calls' });
const outcome = (callId: string, index: number): ReadAheadOutcome => ({ callId, index, outcome: { ok: true, content: `read for ${callId}#${index}` }, ms: 1 });

describe('read-ahead', () => {
  it('reads ahead only what the loop would run as a local activity without asking anyone', () => {
    const named = specs.filter(readsAhead).map((s) => s.name).sort();
    expect(named).toEqual(['list_files', 'read_file']);
    const local = (s: ToolSpec) => s.activity?.local === true;
    for (const s of specs) if (readsAhead(s)) expect(s.readOnly && local(s) && s.needsApproval === false && !s.subAgent).toBe(true);
  });

  it('a call read ahead carries the idempotency key the loop gives that call, whatever came before', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 6 }), fc.integer({ min: 1, max: 5 }), (earlier, width) => {
        const cfg = parseBuiltin({ task: 't' });
        const state = initialState(cfg);
        const results = new ReadAheadResults(specs);
        let n = 0;
        // Earlier replies, each answered, as the loop leaves them.
        for (const w of earlier) {
          const calls = Array.from({ length: w }, () => call(`c${n++}`, 'list_files'));
          takeReply(state, reply(calls), cfg.pricing);
          for (const c of calls) state.messages.push({ role: 'tool', tool_call_id: c.id, name: 'list_files', content: 'x' });
        }
        const ahead = results.input({ ids, cfg, state }).readAhead!;
        const calls = Array.from({ length: width }, (_, i) => call(`r${i}`, 'read_file', { path: `f${i}` }));
        takeReply(state, reply(calls), cfg.pricing);
        const messageIndex = state.messages.length - 1;
        calls.forEach((c, i) => {
          expect(`${ahead.keyPrefix}${ahead.firstOccurrence + i}`).toBe(idempotencyKey(ids.workflowId, ids.effectsChainId, { call: c, messageIndex }, state));
        });
      }),
      params,
    );
  });

  it('an outcome goes to the call it was read for, once; never to another reply\'s call of the same id', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.subarray([0, 1, 2, 3, 4]), (width, readIdx) => {
        const cfg = parseBuiltin({ task: 't' });
        const state = initialState(cfg);
        const results = new ReadAheadResults(specs);
        // Every call reuses one id, as some providers do.
        const calls = Array.from({ length: width }, () => call('call_0', 'list_files'));
        results.input({ ids, cfg, state });
        takeReply(state, reply(calls), cfg.pricing);
        const messageIndex = state.messages.length - 1;
        const read = readIdx.filter((i) => i < width);
        results.keep(read.map((i) => outcome('call_0', i)), messageIndex);
        const message = state.messages[messageIndex];
        const asked = message.role === 'assistant' ? message.tool_calls! : [];
        asked.forEach((c, i) => {
          const got = results.take({ state }, { call: c, messageIndex });
          expect(got?.index).toBe(read.includes(i) ? i : undefined);
          // Once: asking again finds nothing.
          expect(results.take({ state }, { call: c, messageIndex })).toBeUndefined();
        });
        // The next reply reuses the id: nothing of the last one reaches it.
        results.keep(read.map((i) => outcome('call_0', i)), messageIndex);
        results.input({ ids, cfg, state });
        const next = [call('call_0', 'list_files')];
        takeReply(state, reply(next), cfg.pricing);
        expect(results.take({ state }, { call: next[0], messageIndex: state.messages.length - 1 })).toBeUndefined();
      }),
      params,
    );
  });

  it('names what the dedupe cache answers by digest, the most recent first kept, and nothing when dedupe is off', () => {
    const cfg = parseBuiltin({ task: 't' });
    const state = initialState(cfg);
    for (let i = 0; i < MAX_CACHED_DIGESTS + 10; i++) rememberResult(state, cacheKey('read_file', { path: `f${i}` }), 'x', 1_000_000);
    const ahead = new ReadAheadResults(specs).input({ ids, cfg, state }).readAhead!;
    expect(ahead.cached).toHaveLength(MAX_CACHED_DIGESTS);
    expect(ahead.cached).toContain(cachedDigest('read_file', { path: `f${MAX_CACHED_DIGESTS + 9}` }));
    expect(ahead.cached).not.toContain(cachedDigest('read_file', { path: 'f0' }));
    // Key order does not matter: the activity's digest of the same call matches.
    expect(cacheKeyDigest(cacheKey('read_file', { b: 1, a: 2 }))).toBe(cachedDigest('read_file', { a: 2, b: 1 }));
    const off = parseBuiltin({ task: 't', dedupe: 'off' });
    expect(new ReadAheadResults(specs).input({ ids, cfg: off, state }).readAhead?.cached).toBeUndefined();
  });
});
