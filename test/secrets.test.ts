// The API key lives in the worker's configuration only: it never reaches the
// workflow input, the history, the trace or an error message.
import { afterAll, describe, expect, it } from 'vitest';
import { startProvider, type RunningProvider } from '../dev/provider/server.js';
import { GZIP_ENCODING } from '../node/payload-codec.js';
import { decodedHistoryText, mentions } from './helpers/decoded-history.js';
import { marker, useHarness } from './helpers/harness.js';

const KEY = 'sk-test-0123456789abcdef';
let provider: RunningProvider;
const h = useHarness({
  llm: async () => {
    provider = await startProvider({ apiKey: KEY });
    return { url: provider.url, apiKey: KEY };
  },
});
afterAll(() => provider?.close());

const TASK = 'Which file mentions a timeout?';

describe('API key handling', () => {
  it('the key authenticates every model call but appears in no history, result or trace', async () => {
    const handle = await h.start({ task: TASK, model: 'plan' });
    const r = await handle.result();
    expect(r.status).toBe('completed');
    const history = await handle.fetchHistory();
    const text = await decodedHistoryText(history);
    // The search reads inside payloads: the task (in the input) and the model's
    // answer (in the result) are found, so a leaked key would be too.
    expect(mentions(text, TASK)).toBe(true);
    expect(mentions(text, r.output!)).toBe(true);
    expect(mentions(text, KEY)).toBe(false);
    expect(mentions(JSON.stringify(r), KEY)).toBe(false);
    expect(mentions(JSON.stringify(h.trace(handle.workflowId)), KEY)).toBe(false);
  });

  it('the same search finds a string planted inside a compressed payload of a real history', async () => {
    // A task over the codec's threshold travels gzipped: the string is in no raw byte of the history.
    const planted = `sk-planted-${marker()}`;
    const task = `${TASK} ${'Context line. '.repeat(3000)} ${planted}`;
    const handle = await h.start({ task, model: 'plan' });
    await handle.result();
    const history = await handle.fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(new TextDecoder().decode(input?.metadata?.encoding ?? new Uint8Array())).toBe(GZIP_ENCODING);
    expect(JSON.stringify(history)).not.toContain(planted);
    expect(mentions(await decodedHistoryText(history), planted)).toBe(true);
  });
});
