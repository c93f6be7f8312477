// The seam to a real model: LLM_BASE_URL, LLM_API_KEY and LLM_MODEL point the
// same worker at any OpenAI-compatible server. Here the "other server" is a
// second scripted provider on its own port, requiring its own key.
import { afterAll, describe, expect, it } from 'vitest';
import { startProvider, type RunningProvider } from '../dev/provider/server.js';
import { providerRequests, useHarness } from './helpers/harness.js';

let other: RunningProvider;
const h = useHarness({
  llm: async () => {
    other = await startProvider({ apiKey: 'sk-other-server' });
    return { url: other.url, apiKey: 'sk-other-server', model: 'plan' };
  },
});
afterAll(() => other?.close());

describe('LLM_BASE_URL / LLM_API_KEY / LLM_MODEL', () => {
  it('sends every call to the configured server under the configured model name, whatever the run names', async () => {
    const task = 'Which file mentions a timeout? [seam]';
    const r = await h.run({ task, model: 'qwen2.5-0.5b-instruct' });
    expect(r).toMatchObject({ status: 'completed', turns: 3, output: 'errors.log mentions a timeout: worker 7 timed out after 30000 ms.' });
    const seen = await providerRequests(other.url, '[seam]');
    expect(seen.map((q) => [q.model, q.status])).toEqual([['plan', 200], ['plan', 200], ['plan', 200]]);
    // The suite's shared provider never saw it.
    expect(await providerRequests(h.providerUrl, '[seam]')).toHaveLength(0);
  });
});
