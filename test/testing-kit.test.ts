// The testing kit (`temporal-agent-harness/testing`) as a team uses it: the
// scripted model started by startScriptedModel with a scenario of the team's
// own beside the built-ins, a worker pointed at it by base URL, a run that
// follows the team's script, a fault queued through the kit, and the
// request log it keeps.
import { afterAll, describe, expect, it } from 'vitest';
import { transcriptQuery } from '../common/run-messages.js';
import { startScriptedModel, type RunningScriptedModel } from '../dev/testing.js';
import { marker, useHarness } from './helpers/harness.js';

let kit: RunningScriptedModel | undefined;
const h = useHarness({
  llm: async () => {
    kit = await startScriptedModel({
      scenarios: {
        // The team's scenario: list the workspace, then report what the tool said.
        team_listing: ({ turn, toolText }) =>
          turn === 0 ? { type: 'calls', calls: [{ id: 'c1', name: 'list_files', args: {} }] } : { type: 'answer', content: `Listed: ${toolText}` },
      },
    });
    return { url: kit.baseUrl };
  },
  // The team's scenario names are not the kit's built-in models: a `"*"` price lets runs keep their default USD budget.
  modelPrices: { '*': { inputPerMTokUsd: 2, outputPerMTokUsd: 12 } },
});

afterAll(async () => {
  await kit?.close();
});

describe('the testing kit', () => {
  it('runs a scenario of the team\'s own beside the built-ins, end to end through a worker', async () => {
    const m = marker();
    const handle = await h.start({ task: `What is in the workspace? ${m}`, model: 'team_listing', tools: ['list_files'] });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
    const last = (await handle.query(transcriptQuery)).at(-1);
    expect(last).toMatchObject({ role: 'assistant' });
    expect(String(last?.content)).toMatch(/^Listed: /);
    // The kit's log: both requests of the run, each answered.
    expect((await kit!.requests(m)).map((q) => [q.turn, q.status])).toEqual([[0, 200], [1, 200]]);
    // A built-in scenario on the same server.
    expect((await h.run({ task: `Which file mentions a timeout? ${marker()}`, model: 'plan' })).status).toBe('completed');
  });

  it('queues a fault for one run: a 401 from the provider fails it at once, naming the cause', async () => {
    const m = marker();
    await kit!.addFault({ match: { taskIncludes: m }, fault: { type: 'status', status: 401, message: 'bad key' }, times: 1 });
    const r = await h.run({ task: `What is in the workspace? ${m}`, model: 'team_listing', tools: ['list_files'] });
    expect(r).toMatchObject({ status: 'failed', errorType: 'ProviderUnauthorized' });
    await kit!.clearFaults(m);
  });

  it('refuses a scenario named like a built-in, and one that is not a function', async () => {
    await expect(startScriptedModel({ scenarios: { plan: () => ({ type: 'answer', content: 'x' }) } })).rejects.toThrow('scenario "plan" is a built-in scenario of the scripted provider');
    await expect(startScriptedModel({ scenarios: { mine: 'not a function' as never } })).rejects.toThrow('scenario "mine" must be a function');
  });
});
