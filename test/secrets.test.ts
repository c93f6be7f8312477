// The API key lives in the worker's configuration only: it never reaches the
// workflow input, the history, the trace or an error message.
import { afterAll, describe, expect, it } from 'vitest';
import { startProvider, type RunningProvider } from '../provider/server';
import type { RunResult } from '../common/contract';
import { useHarness } from './harness';

const KEY = 'sk-test-0123456789abcdef';
let provider: RunningProvider;
const h = useHarness({
  llm: async () => {
    provider = await startProvider({ apiKey: KEY });
    return { url: provider.url, apiKey: KEY };
  },
});
afterAll(() => provider?.close());

describe('API key handling', () => {
  it('the key authenticates every model call but appears in no history, result or trace', async () => {
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan' });
    const r = (await handle.result()) as RunResult;
    expect(r.status).toBe('completed');
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history.length).toBeGreaterThan(1000);
    expect(history).not.toContain(KEY);
    expect(JSON.stringify(h.trace(handle.workflowId))).not.toContain(KEY);
  });
});
