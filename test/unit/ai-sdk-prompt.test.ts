// The transcript ⇄ AI SDK prompt conversion as properties over generated
// transcripts and prompts (pure: thousands of cases in a second), and the
// provider's result back as the harness's reply. A failure prints
// fast-check's seed; re-run with PROPERTY_SEED=<seed> to reproduce it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LanguageModelV3Content, LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3StreamPart, LanguageModelV3Usage } from '@ai-sdk/provider';
import { fromPrompt, HARNESS_OPTIONS_KEY, normalizeTranscript, replyOf, toFunctionTools, toPrompt, usageOf } from '../../activities/ai-sdk-prompt.js';
import { foldParts } from '../../activities/ai-sdk-stream.js';
import { declinedText, toolErrorText } from '../../common/transcript-text.js';
import type { ChatMessage, ToolCall } from '../../common/contract.js';
import { propertyParams } from '../helpers/property.js';

const params = propertyParams();

/** JSON as JSON.parse gives it back (no -0, no undefined), so inputs compare exactly. */
const canonical = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const jsonObject = fc.dictionary(fc.string(), fc.jsonValue()).map(canonical);

/** Tool arguments as a model may write them: canonical JSON, spaced or non-object JSON, or not JSON at all. */
const args = fc.oneof(
  jsonObject.map((o) => JSON.stringify(o)),
  fc.jsonValue().map((v) => JSON.stringify(v, null, 2)),
  fc.string(),
);
const toolCall: fc.Arbitrary<ToolCall> = fc.record({ id: fc.string(), name: fc.string(), args }).map(({ id, name, args: a }) => ({ id, type: 'function', function: { name, arguments: a } }));
/** Tool results as the harness writes them: output, its error wording, or a rejection in words. */
const toolText = fc.oneof(
  fc.string(),
  fc.string().map((e) => toolErrorText(e, 'describe')),
  fc.record({ reason: fc.option(fc.string(), { nil: null }), by: fc.option(fc.string(), { nil: null }) }).map((d) => declinedText('delete_file', { decision: 'reject', ...d })),
);

const message: fc.Arbitrary<ChatMessage> = fc.oneof(
  fc.string().map((content): ChatMessage => ({ role: 'system', content })),
  // The task, a steered message, a summary or omission note: all user text.
  fc.string().map((content): ChatMessage => ({ role: 'user', content })),
  fc
    .record({ content: fc.option(fc.string(), { nil: null }), calls: fc.array(toolCall, { maxLength: 4 }) })
    .map(({ content, calls }): ChatMessage => ({ role: 'assistant', content, ...(calls.length ? { tool_calls: calls } : {}) })),
  fc.record({ id: fc.string(), name: fc.string(), content: toolText }).map(({ id, name, content }): ChatMessage => ({ role: 'tool', tool_call_id: id, name, content })),
);
/** Any sequence, protocol-valid or not: the conversion is total, so the properties hold for all of them. */
const transcript = fc.array(message, { maxLength: 30 });

const callIds = (ms: readonly ChatMessage[]) => ms.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
const resultIds = (ms: readonly ChatMessage[]) => ms.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
const promptCallIds = (p: LanguageModelV3Prompt) => p.flatMap((m) => (m.role === 'assistant' ? m.content.flatMap((c) => (c.type === 'tool-call' ? [c.toolCallId] : [])) : []));
const promptResultIds = (p: LanguageModelV3Prompt) => p.flatMap((m) => (m.role === 'tool' ? m.content.flatMap((c) => (c.type === 'tool-result' ? [c.toolCallId] : [])) : []));

describe('transcript → prompt → transcript', () => {
  it('is the identity, an empty assistant text aside (it comes back null)', () => {
    fc.assert(
      fc.property(transcript, (t) => {
        expect(fromPrompt(toPrompt(t))).toEqual(normalizeTranscript(t));
      }),
      params,
    );
  });

  it('keeps every call id and result id, in order, in the prompt itself', () => {
    fc.assert(
      fc.property(transcript, (t) => {
        const p = toPrompt(t);
        expect(promptCallIds(p)).toEqual(callIds(t));
        expect(promptResultIds(p)).toEqual(resultIds(t));
      }),
      params,
    );
  });

  it('sends parsed arguments as the input; only arguments the input cannot say exactly travel beside it', () => {
    fc.assert(
      fc.property(toolCall, (c) => {
        const [m] = toPrompt([{ role: 'assistant', content: null, tool_calls: [c] }]);
        const part = m.role === 'assistant' ? m.content[0] : undefined;
        if (part?.type !== 'tool-call') throw new Error('expected a tool-call part');
        expect(typeof part.input === 'object' && part.input !== null && !Array.isArray(part.input)).toBe(true);
        const exact = JSON.stringify(part.input) === c.function.arguments;
        expect(part.providerOptions).toEqual(exact ? undefined : { [HARNESS_OPTIONS_KEY]: { arguments: c.function.arguments } });
      }),
      params,
    );
  });

  it('says a failure as error-text (Anthropic marks it is_error) and a rejection as text in our words', () => {
    const call: ToolCall = { id: 'c2', type: 'function', function: { name: 'delete_file', arguments: '{"path":"access.log"}' } };
    const rejected = declinedText('delete_file', { decision: 'reject', reason: 'not this one', by: 'alice' });
    const p = toPrompt([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'T' },
      { role: 'assistant', content: null, tool_calls: [call, { ...call, id: 'c3', function: { name: 'read_file', arguments: '{"path":"x"}' } }] },
      { role: 'tool', tool_call_id: 'c2', name: 'delete_file', content: rejected },
      { role: 'tool', tool_call_id: 'c3', name: 'read_file', content: toolErrorText('no such file: x', 'describe') },
      { role: 'user', content: 'Message from alice: stop' },
    ]);
    expect(p).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: [{ type: 'text', text: 'T' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'c2', toolName: 'delete_file', input: { path: 'access.log' } },
          { type: 'tool-call', toolCallId: 'c3', toolName: 'read_file', input: { path: 'x' } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c2', toolName: 'delete_file', output: { type: 'text', value: rejected } },
          { type: 'tool-result', toolCallId: 'c3', toolName: 'read_file', output: { type: 'error-text', value: 'Error: no such file: x' } },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Message from alice: stop' }] },
    ]);
  });
});

// Prompts in the image of toPrompt: one text part per user message, assistant
// text never empty, object inputs, error-text exactly for "Error: " results,
// a turn's results in one tool message.
const promptMessage: fc.Arbitrary<LanguageModelV3Message> = fc.oneof(
  fc.string().map((content): LanguageModelV3Message => ({ role: 'system', content })),
  fc.string().map((text): LanguageModelV3Message => ({ role: 'user', content: [{ type: 'text', text }] })),
  fc
    .record({
      text: fc.option(fc.string({ minLength: 1 }), { nil: null }),
      calls: fc.array(fc.record({ toolCallId: fc.string(), toolName: fc.string(), input: jsonObject }), { maxLength: 3 }),
    })
    .map(({ text, calls }): LanguageModelV3Message => ({
      role: 'assistant',
      content: [...(text === null ? [] : [{ type: 'text' as const, text }]), ...calls.map((c) => ({ type: 'tool-call' as const, ...c }))],
    })),
  fc
    .array(fc.record({ toolCallId: fc.string(), toolName: fc.string(), value: toolText }), { minLength: 1, maxLength: 3 })
    .map((rs): LanguageModelV3Message => ({
      role: 'tool',
      content: rs.map((r) => ({
        type: 'tool-result' as const,
        toolCallId: r.toolCallId,
        toolName: r.toolName,
        output: r.value.startsWith('Error: ') ? { type: 'error-text' as const, value: r.value } : { type: 'text' as const, value: r.value },
      })),
    })),
);
const prompt = fc.array(promptMessage, { maxLength: 20 }).map((ms) =>
  ms.reduce<LanguageModelV3Message[]>((out, m) => {
    const last = out.at(-1);
    if (m.role === 'tool' && last?.role === 'tool') last.content.push(...m.content);
    else out.push(m);
    return out;
  }, []),
);

describe('prompt → transcript → prompt', () => {
  it('is the identity on the prompts toPrompt makes', () => {
    fc.assert(
      fc.property(prompt, (p) => {
        expect(toPrompt(fromPrompt(p))).toEqual(p);
      }),
      params,
    );
  });

  it('drops what a transcript cannot hold: files and reasoning; several text parts are joined', () => {
    const t = fromPrompt([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'file', data: 'AAAA', mediaType: 'image/png' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'hmm' }, { type: 'text', text: 'x' }, { type: 'text', text: 'y' }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 't', output: { type: 'json', value: { n: 1 } } }] },
    ]);
    expect(t).toEqual([
      { role: 'user', content: 'a\nb' },
      { role: 'assistant', content: 'xy' },
      { role: 'tool', tool_call_id: 'c1', name: 't', content: '{"n":1}' },
    ]);
  });
});

const usage = (input: number | undefined, output: number | undefined, extra: Partial<{ cacheRead: number; cacheWrite: number; reasoning: number }> = {}): LanguageModelV3Usage => ({
  inputTokens: { total: input, noCache: undefined, cacheRead: extra.cacheRead, cacheWrite: extra.cacheWrite },
  outputTokens: { total: output, text: undefined, reasoning: extra.reasoning },
});

describe("a provider's result as the harness's reply", () => {
  const content: fc.Arbitrary<LanguageModelV3Content[]> = fc.array(
    fc.oneof(
      fc.string().map((text): LanguageModelV3Content => ({ type: 'text', text })),
      fc.string().map((text): LanguageModelV3Content => ({ type: 'reasoning', text })),
      fc.record({ toolCallId: fc.string(), toolName: fc.string(), input: args }).map((c): LanguageModelV3Content => ({ type: 'tool-call', ...c })),
    ),
    { maxLength: 8 },
  );

  it('joins the text parts in order and keeps each call id, name and argument text, in order', () => {
    fc.assert(
      fc.property(content, (c) => {
        const r = replyOf({ content: c, finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage: usage(10, 2) });
        const text = c.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
        expect(r.message.content).toBe(text || null);
        const calls = c.flatMap((p) => (p.type === 'tool-call' ? [{ id: p.toolCallId, type: 'function', function: { name: p.toolName, arguments: p.input } }] : []));
        expect(r.message.tool_calls ?? []).toEqual(calls);
        expect(r.finishReason).toBe('tool_calls');
      }),
      params,
    );
  });

  it('says the finish in the words the harness records, and usage with its cache and reasoning counts', () => {
    const r = (unified: 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other', raw?: string) =>
      replyOf({ content: [], finishReason: { unified, raw }, usage: usage(1, 1) }).finishReason;
    expect([r('stop'), r('length'), r('tool-calls'), r('content-filter'), r('error'), r('other'), r('other', 'pause_turn')]).toEqual([
      'stop',
      'length',
      'tool_calls',
      'content_filter',
      'error',
      'other',
      'pause_turn',
    ]);
    expect(usageOf(usage(120, 30, { cacheRead: 100, cacheWrite: 20, reasoning: 12 }))).toEqual({
      promptTokens: 120,
      completionTokens: 30,
      cacheReadTokens: 100,
      cacheWriteTokens: 20,
      reasoningTokens: 12,
    });
    expect(usageOf(usage(120, 30))).toEqual({ promptTokens: 120, completionTokens: 30 });
    // No totals: null, and the caller counts the tokens itself.
    expect(usageOf(usage(undefined, 30))).toBeNull();
    expect(usageOf(usage(5, undefined))).toBeNull();
  });

  it('offers the tools as function tools with their schemas', () => {
    const parameters = { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] };
    expect(toFunctionTools([{ type: 'function', function: { name: 'read_file', description: 'Read', parameters } }])).toEqual([
      { type: 'function', name: 'read_file', description: 'Read', inputSchema: parameters },
    ]);
  });
});

describe('a stream folded into a result', () => {
  it('gives the same reply as the whole result: text deltas concatenated, calls whole, finish and usage', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 10 }), fc.array(fc.record({ toolCallId: fc.string(), toolName: fc.string(), input: args }), { maxLength: 3 }), (deltas, calls) => {
        const parts: LanguageModelV3StreamPart[] = [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't0' },
          ...deltas.map((delta): LanguageModelV3StreamPart => ({ type: 'text-delta', id: 't0', delta })),
          { type: 'text-end', id: 't0' },
          ...calls.map((c): LanguageModelV3StreamPart => ({ type: 'tool-call', ...c })),
          { type: 'finish', finishReason: { unified: 'stop', raw: 'end_turn' }, usage: usage(7, 3) },
        ];
        const fold = foldParts(parts);
        const whole = replyOf({ content: [{ type: 'text', text: deltas.join('') }, ...calls.map((c) => ({ type: 'tool-call' as const, ...c }))], finishReason: { unified: 'stop', raw: 'end_turn' }, usage: usage(7, 3) });
        if (!fold.finishReason || !fold.usage) throw new Error('the fold lost its finish');
        expect(replyOf({ content: fold.content, finishReason: fold.finishReason, usage: fold.usage })).toEqual(whole);
      }),
      params,
    );
  });

  it('a stream that ends without its finish has none, and its error parts are kept', () => {
    const fold = foldParts([
      { type: 'text-delta', id: 'a', delta: 'he' },
      { type: 'error', error: new Error('bad part') },
      { type: 'text-delta', id: 'a', delta: 'llo' },
    ]);
    expect(fold.content).toEqual([{ type: 'text', text: 'hello' }]);
    expect(fold.finishReason).toBeUndefined();
    expect(fold.errors).toHaveLength(1);
  });
});
