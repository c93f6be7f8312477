// The scripted provider over real HTTP: stateless scripts, real token counts,
// and a 400 for transcripts that break the protocol.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvider, type RunningProvider } from '../../dev/provider/server.js';
import { countTokens } from '../../node/tokens.js';

let p: RunningProvider;
beforeAll(async () => {
  p = await startProvider({ apiKey: 'sk-test' });
});
afterAll(() => p.close());

async function chat(body: object, key = 'sk-test') {
  const res = await fetch(`${p.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { choices: { message: { content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }; finish_reason: string }[]; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number }; error?: { message: string } } };
}

describe('scripted provider', () => {
  it('derives the turn from the transcript: the same request gets the same reply', async () => {
    const messages = [{ role: 'user', content: 'Which file?' }];
    const a = await chat({ model: 'plan', messages });
    const b = await chat({ model: 'plan', messages });
    expect(a.body).toMatchObject({ choices: [{ finish_reason: 'tool_calls', message: { tool_calls: [{ id: 'c1', function: { name: 'list_files', arguments: '{}' } }] } }] });
    expect(b.body.choices).toEqual(a.body.choices);
    const turn2 = await chat({
      model: 'plan',
      messages: [...messages, a.body.choices[0].message, { role: 'tool', tool_call_id: 'c1', content: 'errors.log' }],
    });
    expect(turn2.body.choices[0].message.tool_calls?.[0].function).toEqual({ name: 'read_file', arguments: '{"path":"errors.log"}' });
  });

  it('counts tokens with o200k_base: more text, more prompt tokens; completion counts the reply', async () => {
    const short = await chat({ model: 'runaway', messages: [{ role: 'user', content: 'hi' }] });
    const long = await chat({ model: 'runaway', messages: [{ role: 'user', content: 'hi '.repeat(100) }] });
    expect(long.body.usage.prompt_tokens - short.body.usage.prompt_tokens).toBe(countTokens('hi '.repeat(100)) - countTokens('hi'));
    const calls = short.body.choices[0].message.tool_calls;
    expect(short.body.usage.completion_tokens).toBe(countTokens(JSON.stringify(calls)));
    expect(short.body.usage.total_tokens).toBe(short.body.usage.prompt_tokens + short.body.usage.completion_tokens);
    expect(countTokens('hello world')).toBe(2);
  });

  it('answers 400 to a tool result without its call, and to a call left without result', async () => {
    const orphan = await chat({ model: 'plan', messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'c1', content: 'r' }] });
    expect(orphan.status).toBe(400);
    expect(orphan.body.error?.message).toMatch(/must follow the assistant message/);
    const open = await chat({
      model: 'plan',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{}' } }] },
        { role: 'user', content: 'and?' },
      ],
    });
    expect(open.status).toBe(400);
    expect(open.body.error?.message).toMatch(/c1 .* have no tool result/);
  });

  it('answers 401 to a wrong key and 404 to an unknown model', async () => {
    expect((await chat({ model: 'plan', messages: [] }, 'wrong')).status).toBe(401);
    expect((await chat({ model: 'gpt-nope', messages: [{ role: 'user', content: 'x' }] })).status).toBe(404);
  });
});
