// Attacks on the testing kit's new surface: a request log that now keeps
// bodies. What a hostile (or merely careless) client sends the kit — a 10 MB
// body, 10,000 requests, a body that is not JSON, a body nested 1,000 deep —
// gets a clear 4xx naming what is wrong, the log stays within its limits
// (the oldest bodies, then the oldest requests, dropped and counted), and the
// kit keeps answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, MAX_BODY_DEPTH, startScriptedModel, type RunningScriptedModel } from '../../dev/testing.js';

let kit: RunningScriptedModel;
beforeAll(async () => {
  kit = await startScriptedModel({ log: { maxRequests: 500, maxBytes: 256 * 1024 } });
});
afterAll(async () => {
  await kit?.close();
});

const chat = (body: string, url = kit.baseUrl) => fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const request = (task: string, extra: object = {}) => JSON.stringify({ model: 'plan', messages: [{ role: 'user', content: task }], ...extra });

/** The kit still answers a normal request with its scenario's first call. */
async function stillUp(): Promise<void> {
  const res = await chat(request('Which file mentions a timeout? [still-up]'));
  expect(res.status).toBe(200);
  expect(((await res.json()) as { choices: { message: { tool_calls: { function: { name: string } }[] } }[] }).choices[0].message.tool_calls[0].function.name).toBe('list_files');
}

describe('the testing kit under hostile requests', () => {
  it(`a 10 MB body: a 413 naming the limit of ${MAX_BODY_BYTES} bytes, on both protocols, and the kit stays up`, async () => {
    const huge = request(`x${'a'.repeat(10 * 1024 * 1024)}`);
    const res = await chat(huge);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(`request body is larger than the scripted provider's limit of ${MAX_BODY_BYTES} bytes (8 MiB)`);
    const anthropic = await fetch(`${kit.baseUrl}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: huge });
    expect(anthropic.status).toBe(413);
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large', message: expect.stringContaining(`limit of ${MAX_BODY_BYTES} bytes`) } });
    await stillUp();
  });

  it('a body that is not JSON: a 400 saying so, and the kit stays up', async () => {
    const res = await chat('{"model": "plan", "messages": [');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^request body is not JSON: /);
    await stillUp();
  });

  it(`a body nested 1,000 deep (in a message, and in a tool's parameters): a 400 naming the limit of ${MAX_BODY_DEPTH}, and the kit stays up`, async () => {
    const deep = `${'['.repeat(1000)}${']'.repeat(1000)}`;
    for (const body of [
      `{"model":"plan","messages":[{"role":"user","content":${deep}}]}`,
      `{"model":"plan","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t","parameters":${deep}}}]}`,
    ]) {
      const res = await chat(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(`request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep; the limit is ${MAX_BODY_DEPTH}`);
    }
    // Brackets inside a string are text, not nesting: a task full of them is a normal request.
    const res = await chat(request(`${deep} [brackets-in-text]`));
    expect(res.status).toBe(200);
    expect((await kit.requests('[brackets-in-text]'))[0].body?.messages[0].content).toBe(`${deep} [brackets-in-text]`);
    await stillUp();
  });

  it('10,000 requests: the log keeps the newest 500 at most, within its bytes, and counts the ones it dropped', async () => {
    const before = await kit.requestLog();
    const total = 10_000;
    let next = 0;
    // 16 at a time: a client that floods the kit, not one that waits its turn.
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < total) {
          const i = next++;
          // A model the kit has no scenario for: logged, then a 404 at once (no reply to count tokens of: the flood is the log's, not the scenarios').
          const res = await chat(request(`flood ${i} [flood-${i}]`, { model: 'no_such_model', temperature: 0.1 }));
          expect(res.status).toBe(404);
          await res.arrayBuffer();
        }
      }),
    );
    const stats = await kit.requestLog();
    expect(stats).toMatchObject({ requests: 500, maxRequests: 500, maxBytes: 256 * 1024, bodiesDropped: 0 });
    expect(stats.bytes).toBeLessThanOrEqual(256 * 1024);
    expect(stats.dropped).toBe(before.dropped + before.requests + total - 500);
    const kept = await kit.requests('flood ');
    expect(kept).toHaveLength(500);
    // The newest are kept, each with its body; the oldest went.
    expect(kept.at(-1)?.body?.settings.temperature).toBe(0.1);
    expect(await kit.requests(`[flood-0]`)).toEqual([]);
    await stillUp();
  }, 300_000);

  it('bodies that fill the bytes before the count: the oldest bodies go first (their requests stay, with their status), then, for tasks alone over the limit, the oldest requests', async () => {
    const small = await startScriptedModel({ log: { maxRequests: 1000, maxBytes: 64 * 1024 } });
    try {
      // 20 requests of ~10 KB each (a long system prompt), small tasks.
      const system = 'Be precise. '.repeat(850);
      for (let i = 0; i < 20; i++) {
        const res = await chat(JSON.stringify({ model: 'plan', messages: [{ role: 'system', content: system }, { role: 'user', content: `sys ${i} [sys-${i}]` }] }), small.baseUrl);
        expect(res.status).toBe(200);
      }
      let stats = await small.requestLog();
      expect(stats).toMatchObject({ requests: 20, dropped: 0 });
      expect(stats.bytes).toBeLessThanOrEqual(64 * 1024);
      expect(stats.bodiesDropped).toBeGreaterThan(10);
      const all = await small.requests('sys ');
      expect(all.map((r) => r.status)).toEqual(Array(20).fill(200));
      // Oldest first: the first ones lost their bodies, the newest kept theirs.
      expect(all.filter((r) => r.bodyOmitted).length).toBe(stats.bodiesDropped);
      expect(all.slice(0, stats.bodiesDropped).every((r) => r.bodyOmitted && r.body === undefined)).toBe(true);
      expect(all.at(-1)?.body?.system).toBe(system);

      // Tasks of ~10 KB each: past the bodies, whole requests go, counted.
      for (let i = 0; i < 10; i++) expect((await chat(request(`big ${i} [big-${i}] ${'w '.repeat(5000)}`), small.baseUrl)).status).toBe(200);
      stats = await small.requestLog();
      expect(stats.bytes).toBeLessThanOrEqual(64 * 1024);
      expect(stats.dropped).toBe(30 - stats.requests);
      expect(stats.dropped).toBeGreaterThan(20);
      expect(await small.requests('[sys-0]')).toEqual([]);
      expect(await small.requests('[big-9]')).toHaveLength(1);

      // 100 KB of task: more than the whole log holds; kept without its body, its task cut.
      expect((await chat(request(`[huge-task] ${'y'.repeat(100 * 1024)}`), small.baseUrl)).status).toBe(200);
      const [huge] = await small.requests('[huge-task]');
      expect(huge).toMatchObject({ bodyOmitted: true, status: 200 });
      expect(huge.body).toBeUndefined();
      expect(huge.task.length).toBeLessThanOrEqual(1024);
      expect((await small.requestLog()).bytes).toBeLessThanOrEqual(64 * 1024);
    } finally {
      await small.close();
    }
  });

  it('log limits that are not positive integers are refused, naming the option', async () => {
    await expect(startScriptedModel({ log: { maxRequests: 0 } })).rejects.toThrow('log.maxRequests must be a positive integer, got 0');
    await expect(startScriptedModel({ log: { maxBytes: 1.5 } })).rejects.toThrow('log.maxBytes must be a positive integer, got 1.5');
  });
});
