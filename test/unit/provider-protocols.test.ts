// The real AI SDK provider packages against the scripted provider, by base
// URL: @ai-sdk/anthropic on POST /v1/messages and @ai-sdk/openai-compatible on
// POST /v1/chat/completions, their doGenerate and doStream called directly
// with prompts built by activities/ai-sdk-prompt.ts. No workflow: this is the
// provider level the model activity will stand on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, type LanguageModelV3, type LanguageModelV3CallOptions, type LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { startProvider, type RunningProvider } from '../../dev/provider/server.js';
import { addFault, providerConnections, providerRequests } from '../../dev/provider/control.js';
import { anthropicScriptInput, parseAnthropicRequest } from '../../dev/provider/anthropic.js';
import { parseChatRequest } from '../../dev/provider/chat.js';
import { replyOf, toFunctionTools, toPrompt, type ProviderReply } from '../../activities/ai-sdk-prompt.js';
import { foldParts } from '../../activities/ai-sdk-stream.js';
import { countCompletionTokens, countPromptTokens } from '../../node/tokens.js';
import { toolErrorText, toolMessage } from '../../common/transcript-text.js';
import type { ChatMessage } from '../../common/contract.js';
import type { OpenAiToolDefinition } from '../../common/tool-spec.js';

type Protocol = 'anthropic' | 'chat';
const PROTOCOLS: Protocol[] = ['anthropic', 'chat'];
const KEY = 'sk-scripted';

let p: RunningProvider;
/** Slow streams, so an abort lands in the middle of one. */
let slow: RunningProvider;
beforeAll(async () => {
  [p, slow] = await Promise.all([
    // A scenario of the caller's own, served on both routes like the built-ins.
    startProvider({ apiKey: KEY, streamChunkDelayMs: 1, scenarios: { echo_tools: ({ turn, toolNames }) => ({ type: 'answer', content: `turn ${turn}: ${toolNames.join(',')}` }) } }),
    startProvider({ apiKey: KEY, streamChunkDelayMs: 100 }),
  ]);
});
afterAll(() => Promise.all([p.close(), slow.close()]));

function modelOf(protocol: Protocol, name: string, at: RunningProvider = p): LanguageModelV3 {
  return protocol === 'anthropic'
    ? createAnthropic({ baseURL: at.url, apiKey: KEY })(name)
    : createOpenAICompatible({ baseURL: at.url, name: 'scripted', apiKey: KEY, includeUsage: true }).chatModel(name);
}

const TOOLS: OpenAiToolDefinition[] = [
  { type: 'function', function: { name: 'list_files', description: 'List the workspace files.', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'read_file', description: 'Read one file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
];
const RESULTS: Record<string, string> = { list_files: 'errors.log\naccess.log\nnotes.txt', read_file: 'worker 7 timed out after 30000 ms' };
const ANSWER = 'errors.log mentions a timeout: worker 7 timed out after 30000 ms.';

function callOptions(transcript: readonly ChatMessage[], extra: Partial<LanguageModelV3CallOptions> = {}): LanguageModelV3CallOptions {
  return { prompt: toPrompt(transcript), tools: toFunctionTools(TOOLS), maxOutputTokens: 1000, ...extra };
}

interface Turn {
  reply: ProviderReply;
  /** The body the package sent: what the provider counted. */
  body: unknown;
  /** Streamed turns: the text deltas, in order. */
  deltas: string[];
}

async function readAll(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<LanguageModelV3StreamPart[]> {
  const parts: LanguageModelV3StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

async function turnOf(m: LanguageModelV3, options: LanguageModelV3CallOptions, stream: boolean): Promise<Turn> {
  if (!stream) {
    const r = await m.doGenerate(options);
    return { reply: replyOf(r), body: r.request?.body, deltas: [] };
  }
  const r = await m.doStream(options);
  const parts = await readAll(r.stream);
  const fold = foldParts(parts);
  if (!fold.finishReason || !fold.usage || fold.errors.length) throw new Error(`the stream did not finish cleanly: ${JSON.stringify(fold.errors)}`);
  return {
    reply: replyOf({ content: fold.content, finishReason: fold.finishReason, usage: fold.usage }),
    body: r.request?.body,
    deltas: parts.flatMap((x) => (x.type === 'text-delta' ? [x.delta] : [])),
  };
}

/** The `plan` scenario to its answer: each reply kept with its calls, each call answered, as the loop does. */
async function runPlan(protocol: Protocol, task: string, stream: boolean): Promise<{ transcript: ChatMessage[]; turns: Turn[] }> {
  const m = modelOf(protocol, 'plan');
  const transcript: ChatMessage[] = [
    { role: 'system', content: 'You are a careful agent.' },
    { role: 'user', content: task },
  ];
  const turns: Turn[] = [];
  for (let i = 0; i < 5; i++) {
    const turn = await turnOf(m, callOptions(transcript), stream);
    turns.push(turn);
    transcript.push(turn.reply.message);
    const calls = turn.reply.message.tool_calls ?? [];
    if (!calls.length) break;
    for (const c of calls) transcript.push(toolMessage(c.id, c.function.name, RESULTS[c.function.name]));
  }
  return { transcript, turns };
}

/** What the provider must have counted for a request the package sent (o200k_base over its chat-completions equivalent). */
function expectedPromptTokens(protocol: Protocol, body: unknown): number {
  const req = protocol === 'anthropic' ? parseAnthropicRequest(body) : parseChatRequest(typeof body === 'string' ? JSON.parse(body) : body);
  if (typeof req === 'string') throw new Error(req);
  return countPromptTokens(req.messages, req.tools);
}

describe.each(PROTOCOLS)('%s package against the scripted provider', (protocol) => {
  it('plan over three turns: tool calls with their ids, results, the answer; usage is the BPE count of what was sent', async () => {
    const task = `Which file mentions a timeout? plan-${protocol}`;
    const { transcript, turns } = await runPlan(protocol, task, false);
    expect(turns.map((t) => t.reply.finishReason)).toEqual(['tool_calls', 'tool_calls', 'stop']);
    expect(transcript.slice(2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{}' } }] },
      toolMessage('c1', 'list_files', RESULTS.list_files),
      { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path":"errors.log"}' } }] },
      toolMessage('c2', 'read_file', RESULTS.read_file),
      { role: 'assistant', content: ANSWER },
    ]);
    for (const t of turns) {
      expect(t.reply.usage).toEqual({
        promptTokens: expectedPromptTokens(protocol, t.body),
        completionTokens: countCompletionTokens(t.reply.message.content, t.reply.message.tool_calls),
        cacheReadTokens: 0,
        ...(protocol === 'anthropic' ? { cacheWriteTokens: 0 } : { reasoningTokens: 0 }),
      });
    }
    // The provider saw one request per turn, turn by turn, on this protocol.
    expect((await providerRequests(p.url, task)).map((l) => [l.protocol, l.turn, l.status])).toEqual([
      [protocol, 0, 200],
      [protocol, 1, 200],
      [protocol, 2, 200],
    ]);
  });

  it('streamed: the same replies and usage, the answer in several text deltas that concatenate to it', async () => {
    const whole = await runPlan(protocol, `Which file? stream-${protocol}`, false);
    const streamed = await runPlan(protocol, `Which file? stream-${protocol}`, true);
    expect(streamed.transcript).toEqual(whole.transcript);
    expect(streamed.turns.map((t) => t.reply)).toEqual(whole.turns.map((t) => t.reply));
    const last = streamed.turns.at(-1);
    expect(last?.deltas.length).toBeGreaterThan(3);
    expect(last?.deltas.join('')).toBe(ANSWER);
    expect((await providerRequests(p.url, `stream-${protocol}`)).map((l) => l.stream)).toEqual([false, false, false, true, true, true]);
  });

  it.each([429, 500])('%i surfaces as the package APICallError with the status', async (status) => {
    const task = `status-${status}-${protocol}`;
    await addFault(p.url, { match: { taskIncludes: task, protocol }, fault: { type: 'status', status, retryAfterSec: 1, message: `injected ${status}` }, times: 2 });
    const transcript: ChatMessage[] = [{ role: 'user', content: task }];
    const m = modelOf(protocol, 'plan');
    for (const call of [() => m.doGenerate(callOptions(transcript)), () => m.doStream(callOptions(transcript))]) {
      const err: unknown = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(APICallError.isInstance(err)).toBe(true);
      if (!APICallError.isInstance(err)) return;
      expect(err.statusCode).toBe(status);
      expect(err.isRetryable).toBe(true);
      expect(err.message).toContain(`injected ${status}`);
      expect(err.responseHeaders?.['retry-after']).toBe('1');
    }
  });

  it('a malformed stream part is an error part, and the stream ends: no hang', async () => {
    const task = `malformed-${protocol}`;
    await addFault(p.url, { match: { taskIncludes: task, stream: true }, fault: { type: 'malformed' }, times: 1 });
    const r = await modelOf(protocol, 'plan').doStream(callOptions([{ role: 'user', content: task }]));
    const fold = foldParts(await readAll(r.stream));
    expect(fold.errors).toHaveLength(1);
    expect(String(fold.errors[0])).toMatch(/JSON parsing failed/);
  });

  it('a stream that ends early: no finish part, or an error beside one (the caller must check both)', async () => {
    const task = `truncated-${protocol}`;
    await addFault(p.url, { match: { taskIncludes: task, stream: true }, fault: { type: 'truncated' }, times: 1 });
    const r = await modelOf(protocol, 'plan').doStream(callOptions([{ role: 'user', content: task }]));
    const fold = foldParts(await readAll(r.stream));
    // @ai-sdk/anthropic ends its stream quietly, without a finish part;
    // @ai-sdk/openai-compatible reports an error, then finishes anyway.
    if (protocol === 'anthropic') expect([fold.finishReason, fold.errors]).toEqual([undefined, []]);
    else expect(String(fold.errors[0])).toMatch(/ended without a finish reason/);
    expect((await providerRequests(p.url, task))[0]).toMatchObject({ status: 200, cut: true });
  });

  it('aborting a stream closes its connection: the provider counts it gone and logs it aborted', async () => {
    const task = `abort-${protocol}`;
    // Two turns in, the plan scenario answers in text: a stream of ~15 events, 100 ms apart.
    // (User messages between: Anthropic's package would merge two assistant messages into one turn.)
    const transcript: ChatMessage[] = [
      { role: 'user', content: task },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'go on' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'go on' },
    ];
    const ac = new AbortController();
    const r = await modelOf(protocol, 'plan', slow).doStream(callOptions(transcript, { abortSignal: ac.signal }));
    const reader = r.stream.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended before its first text delta');
      if (value.type === 'text-delta') break;
    }
    expect(await providerConnections(slow.url)).toMatchObject({ streams: 1 });
    ac.abort();
    await expect(reader.read()).rejects.toThrow();
    const t0 = Date.now();
    while ((await providerConnections(slow.url)).streams > 0 && Date.now() - t0 < 2000) await new Promise((res) => setTimeout(res, 10));
    expect(await providerConnections(slow.url)).toMatchObject({ streams: 0, requests: 0 });
    expect((await providerRequests(slow.url, task))[0]).toMatchObject({ protocol, stream: true, status: 200, aborted: true });
  });
});

describe('Anthropic specifics', () => {
  it('a failed tool result goes as a tool_result block with is_error; the system prompt as the top-level field', async () => {
    const transcript: ChatMessage[] = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'is_error?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"nope"}' } }] },
      toolMessage('c1', 'read_file', toolErrorText('no such file: nope', 'describe')),
    ];
    const r = await modelOf('anthropic', 'plan').doGenerate(callOptions(transcript));
    expect(r.request?.body).toMatchObject({
      system: [{ type: 'text', text: 'S' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'is_error?' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'read_file', input: { path: 'nope' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'Error: no such file: nope', is_error: true }] },
      ],
    });
  });

  it('answers in Anthropic’s shapes: 401 without the key, 400 without anthropic-version or max_tokens, errors typed', async () => {
    const post = (headers: Record<string, string>, body: object) =>
      fetch(`${p.url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then(async (res) => ({ status: res.status, body: (await res.json()) }));
    const ok = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
    const body = { model: 'plan', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
    expect(await post({ 'anthropic-version': '2023-06-01' }, body)).toEqual({ status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } });
    expect(await post({ 'x-api-key': KEY }, body)).toMatchObject({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error' } } });
    expect(await post(ok, { ...body, max_tokens: undefined })).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error', message: expect.stringMatching(/max_tokens/) } } });
    expect(await post(ok, { ...body, model: 'nope' })).toMatchObject({ status: 404, body: { error: { type: 'not_found_error' } } });
    expect(await post(ok, body)).toMatchObject({
      status: 200,
      body: { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'list_files', input: {} }], stop_reason: 'tool_use', usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
    });
    // A tool_use left without its tool_result breaks the protocol, as on the chat route.
    const open = { ...body, messages: [...body.messages, { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'list_files', input: {} }] }, { role: 'user', content: 'and?' }] };
    expect(await post(ok, open)).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error', message: expect.stringMatching(/c1 .* have no tool result/) } } });
  });
});

describe("an Anthropic request as the scenario's inputs", () => {
  it('turn = assistant messages, toolText = the tool_result texts, toolNames from tools, task = the first user text', () => {
    expect(
      anthropicScriptInput({
        model: 'plan',
        max_tokens: 10,
        system: [{ type: 'text', text: 'S' }],
        tools: [{ name: 'list_files', input_schema: { type: 'object' } }, { name: 'read_file', input_schema: { type: 'object' } }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'the task' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'list_files', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'a.txt' }, { type: 'text', text: 'a steer' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c2', name: 'read_file', input: { path: 'a.txt' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c2', content: [{ type: 'text', text: 'hello' }], is_error: true }] },
        ],
      }),
    ).toMatchObject({
      turn: 2,
      toolText: 'a.txt\nhello',
      toolNames: ['list_files', 'read_file'],
      task: 'the task',
      // The whole request, in chat-completions shape: what a scenario of a team's own may read.
      system: 'S',
      tools: [{ name: 'list_files', parameters: { type: 'object' } }, { name: 'read_file', parameters: { type: 'object' } }],
      settings: { maxTokens: 10, other: {} },
    });
    expect(anthropicScriptInput({ model: 'plan', max_tokens: 10, system: 'S', messages: [{ role: 'user', content: 'the task' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'list_files', input: {} }] }] })?.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'the task' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{}' } }] },
    ]);
    expect(anthropicScriptInput({ messages: [] })).toBeNull();
  });

  it.each(PROTOCOLS)("%s: the script scenario and a scenario of the caller's own", async (protocol) => {
    const task = `${protocol} script: [[{"name": "read_file", "args": {"path": "notes.txt"}}]]`;
    const first = await turnOf(modelOf(protocol, 'script'), callOptions([{ role: 'user', content: task }]), true);
    expect(first.reply.message.tool_calls).toEqual([{ id: 's0_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } }]);
    const own = await turnOf(modelOf(protocol, 'echo_tools'), callOptions([{ role: 'user', content: 'hi' }]), false);
    expect(own.reply.message.content).toBe('turn 0: list_files,read_file');
  });
});
