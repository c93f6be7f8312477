// The scripted provider's time model: one first-token delay and one time per
// output token, applied alike to a streamed and an unstreamed reply, so a
// bench comparing the two is fair by construction (issue 38: the provider
// used to pause 5 ms between stream events and not at all unstreamed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvider, type RunningProvider } from '../../dev/provider/server.js';

const FIRST_MS = 120;
const PER_TOKEN_MS = 8;
let p: RunningProvider;
beforeAll(async () => {
  p = await startProvider({ firstTokenMs: FIRST_MS, msPerToken: PER_TOKEN_MS, scenarios: { words: () => ({ type: 'answer', content: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ') }) } });
});
afterAll(() => p.close());

const body = (stream: boolean) => JSON.stringify({ model: 'words', messages: [{ role: 'user', content: 'talk' }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });

/** When the first event with text and the end arrived (ms after sending), and the reply's output tokens. */
async function timed(stream: boolean): Promise<{ firstMs: number; endMs: number; tokens: number }> {
  const t0 = performance.now();
  const res = await fetch(`${p.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(stream) });
  if (!stream) {
    const json = (await res.json()) as { usage: { completion_tokens: number } };
    const endMs = performance.now() - t0;
    return { firstMs: endMs, endMs, tokens: json.usage.completion_tokens };
  }
  const reader = res.body!.getReader();
  let text = '';
  let firstMs = -1;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    if (firstMs < 0 && /"content":"(?!")/.test(text)) firstMs = performance.now() - t0;
  }
  const endMs = performance.now() - t0;
  const usage = /"completion_tokens":(\d+)/.exec(text);
  return { firstMs, endMs, tokens: Number(usage?.[1]) };
}

describe('scripted provider time model', () => {
  it('an unstreamed reply answers after firstTokenMs + tokens × msPerToken; a streamed one starts at firstTokenMs and ends at the same time', async () => {
    const whole = await timed(false);
    const streamed = await timed(true);
    expect(streamed.tokens).toBe(whole.tokens);
    const due = FIRST_MS + whole.tokens * PER_TOKEN_MS;
    // Never early (timers only fire late); late by at most a loaded machine's slack.
    expect(whole.endMs).toBeGreaterThanOrEqual(due - 2);
    expect(streamed.endMs).toBeGreaterThanOrEqual(due - 2);
    expect(streamed.firstMs).toBeGreaterThanOrEqual(FIRST_MS - 2);
    // The stream's text begins well before its end: it is paced, not sent at once after the wait.
    expect(streamed.firstMs).toBeLessThan(due - whole.tokens * PER_TOKEN_MS / 2);
    expect(Math.abs(streamed.endMs - whole.endMs)).toBeLessThan(whole.tokens * PER_TOKEN_MS / 2);
  });

  it('refuses a time option that is not a number of ms >= 0, naming it', async () => {
    await expect(startProvider({ msPerToken: -1 })).rejects.toThrow(/msPerToken must be a number of ms >= 0, got -1/);
    await expect(startProvider({ firstTokenMs: Number.NaN })).rejects.toThrow(/firstTokenMs must be a number of ms >= 0/);
  });
});
