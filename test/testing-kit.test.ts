// The testing kit (`temporal-agent-harness/testing`) as a team uses it: the
// scripted model started by startScriptedModel with a scenario of the team's
// own beside the built-ins, a worker pointed at it by base URL, a run that
// follows the team's script, a fault queued through the kit, and the
// request log it keeps — each request's body (system prompt, messages, tool
// definitions, settings) on both protocols. The second part is written as a
// team writes its own test: only the package's entries (here their source
// files: testing, worker, client, tools), its own workflows module, its
// worker run by runTestWorker against the Temporal server the suite started,
// and AI SDK providers pointed at the kit's baseUrl.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createAnthropic as createAnthropicV4 } from '@ai-sdk/anthropic-v4';
import { createOpenAICompatible as createOpenAICompatibleV4 } from '@ai-sdk/openai-compatible-v3';
import { transcriptQuery } from '../common/run-messages.js';
import { runTestWorker, startScriptedModel, type RunningScriptedModel, type RunningTestWorker, type Scenario } from '../dev/testing.js';
import { AgentPlugin, type ModelProvider } from '../worker/index.js';
import { AgentClient } from '../client/index.js';
import { defineTool } from '../activities/tools/index.js';
import { review } from './fixtures/team/workflows.js';
import * as teamActivities from './fixtures/team/activities.js';
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

describe('the request log: each body, in one shape for both protocols', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${kit!.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('chat completions: the system prompt, the messages, the tools and the settings as sent', async () => {
    const m = marker();
    const res = await post('/chat/completions', {
      model: 'team_listing',
      messages: [{ role: 'system', content: [{ type: 'text', text: 'You are terse.' }] }, { role: 'user', content: `List. ${m}` }],
      tools: [{ type: 'function', function: { name: 'list_files', description: 'Lists the files.', parameters: { type: 'object', properties: {} } } }],
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 300,
      stop: ['END'],
      seed: 7,
      tool_choice: 'required',
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } },
      reasoning_effort: 'low',
    });
    expect(res.status).toBe(200);
    const [logged] = await kit!.requests(m);
    expect(logged).toMatchObject({ protocol: 'chat', status: 200, turn: 0 });
    expect(logged.body).toEqual({
      protocol: 'chat',
      model: 'team_listing',
      system: 'You are terse.',
      messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: `List. ${m}` }],
      tools: [{ name: 'list_files', description: 'Lists the files.', parameters: { type: 'object', properties: {} } }],
      settings: {
        temperature: 0.2,
        topP: 0.9,
        maxTokens: 300,
        stopSequences: ['END'],
        seed: 7,
        toolChoice: 'required',
        responseFormat: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } },
        other: { reasoning_effort: 'low' },
      },
      stream: false,
    });
  });

  it("Anthropic's messages: the same shape (system first, tool_use and tool_result as chat messages, input_schema as parameters)", async () => {
    const m = marker();
    const res = await post(
      '/messages',
      {
        model: 'team_listing',
        max_tokens: 200,
        system: [{ type: 'text', text: 'You are terse.' }],
        temperature: 0,
        stop_sequences: ['END'],
        tool_choice: { type: 'any' },
        thinking: { type: 'disabled' },
        tools: [{ name: 'list_files', description: 'Lists the files.', input_schema: { type: 'object' } }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: `List. ${m}` }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'list_files', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'a.txt' }] },
        ],
      },
      { 'anthropic-version': '2023-06-01' },
    );
    expect(res.status).toBe(200);
    const [logged] = await kit!.requests(m);
    expect(logged).toMatchObject({ protocol: 'anthropic', status: 200, turn: 1 });
    expect(logged.body).toEqual({
      protocol: 'anthropic',
      model: 'team_listing',
      system: 'You are terse.',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: `List. ${m}` },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
      ],
      tools: [{ name: 'list_files', description: 'Lists the files.', parameters: { type: 'object' } }],
      settings: { maxTokens: 200, temperature: 0, stopSequences: ['END'], toolChoice: { type: 'any' }, other: { thinking: { type: 'disabled' } } },
      stream: false,
    });
  });

  it('a scenario of its own reads the system prompt, the messages and the tool definitions', async () => {
    const seen: { system: string | null; roles: string[]; tools: string[]; temperature: unknown }[] = [];
    const own = await startScriptedModel({
      scenarios: {
        reads_all: ({ system, messages, tools, settings }) => {
          seen.push({ system, roles: messages.map((x) => x.role), tools: tools.map((t) => `${t.name}: ${t.description ?? ''}`), temperature: settings.temperature });
          return { type: 'answer', content: 'ok' };
        },
      },
    });
    try {
      const res = await fetch(`${own.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'reads_all',
          temperature: 0.5,
          messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'hi' }],
          tools: [{ type: 'function', function: { name: 'lookup_ticket', description: 'Looks a ticket up.', parameters: { type: 'object' } } }],
        }),
      });
      expect(res.status).toBe(200);
      expect(seen).toEqual([{ system: 'Be kind.', roles: ['system', 'user'], tools: ['lookup_ticket: Looks a ticket up.'], temperature: 0.5 }]);
    } finally {
      await own.close();
    }
  });
});

// ---------------------------------------------------------------------------
// A team's own test, as it would write it: its worker under runTestWorker,
// its system prompt asserted at the kit.

const SYSTEM = 'You are the support agent of ACME. Never close a ticket without a reason.';
const KEY = 'sk-kit';
/** The team's scenarios are models of their own: priced, as a USD budget requires. */
const SUPPORT_PRICE = { support: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 }, steered: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } };
const lookupTicket = defineTool({
  name: 'lookup_ticket',
  description: 'Look a support ticket up by id.',
  readOnly: true,
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
  run: async (_ctx, { id }) => JSON.stringify({ id, status: 'open', subject: 'Printer on fire' }),
});
/** The team's scenario: look the ticket up, then answer with what the request said (its system prompt and tools). */
const support: Scenario = ({ turn, system, tools, toolText }) =>
  turn === 0
    ? { type: 'calls', calls: [{ id: 'c1', name: 'lookup_ticket', args: { id: 'T-1' } }] }
    : { type: 'answer', content: `instructed: ${system === SYSTEM}; tools: ${tools.map((t) => t.name).join(',')}; ticket: ${toolText}` };

/** A tool that waits until the test lets it go: the moment to steer the run while it works. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
const gate = { started: deferred(), go: deferred() };
const waitForGo = defineTool({
  name: 'wait_for_go',
  description: 'Waits for a go.',
  readOnly: true,
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  run: async () => {
    gate.started.resolve();
    await gate.go.promise;
    return 'went';
  },
});
/** Waits once, then answers with the last user message the request carried: a steer, if one was sent. */
const steered: Scenario = ({ turn, messages }) =>
  turn === 0 ? { type: 'calls', calls: [{ id: 'c1', name: 'wait_for_go', args: {} }] } : { type: 'answer', content: `last said: ${messages.filter((x) => x.role === 'user').at(-1)?.content ?? ''}` };

describe("a team's test: its worker under runTestWorker, its prompt at the kit", () => {
  let teamKit: RunningScriptedModel;
  let team: RunningTestWorker;
  const workspace = mkdtempSync(join(tmpdir(), 'team-ws-'));
  // The team's Temporal server: here the one the suite started; a team's own
  // test reads its `temporal server start-dev` address from the environment.
  const address = inject('temporalAddress');

  beforeAll(async () => {
    teamKit = await startScriptedModel({ apiKey: KEY, scenarios: { support, steered } });
    team = await runTestWorker({
      address,
      workflowsPath: fileURLToPath(new URL('./fixtures/team/workflows.ts', import.meta.url)),
      activities: teamActivities,
      // The team's own scenario is a model the worker must price: a run under a USD budget on an unpriced model is refused.
      plugins: [new AgentPlugin({ model: { baseUrl: teamKit.baseUrl, apiKey: KEY }, workspace, tools: [lookupTicket, waitForGo], modelPrices: SUPPORT_PRICE })],
    });
  }, 120_000);
  afterAll(async () => {
    await team?.stop();
    await teamKit?.close();
  });

  it('its system prompt and tool description reached the model, and its scenario saw them', async () => {
    const m = marker();
    const agents = new AgentClient({ client: team.client, taskQueue: team.taskQueue });
    const run = await agents.start({ task: `Triage T-1 ${m}`, system: SYSTEM, model: 'support', tools: ['lookup_ticket'] }, { workflowId: `team-${m.slice(1, -1)}` });
    h.track(run.workflowId);
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', turns: 2 });
    expect(result.output).toBe('instructed: true; tools: lookup_ticket; ticket: {"id":"T-1","status":"open","subject":"Printer on fire"}');

    const requests = await teamKit.requests(m);
    expect(requests).toHaveLength(2);
    for (const r of requests) {
      expect(r.body?.system).toBe(SYSTEM);
      expect(r.body?.messages[0]).toEqual({ role: 'system', content: SYSTEM });
      expect(r.body?.tools).toEqual([expect.objectContaining({ name: 'lookup_ticket', description: 'Look a support ticket up by id.', parameters: expect.objectContaining({ required: ['id'] }) })]);
    }
    // The tool's result went back to the model on the second request.
    expect(requests[1].body?.messages.filter((x) => x.role === 'tool').map((x) => x.content)).toEqual(['{"id":"T-1","status":"open","subject":"Printer on fire"}']);
  });

  it("the team's own workflow runs the agent as a child on the same worker; the kit saw the child's prompt", async () => {
    const m = marker();
    const handle = await team.client.workflow.start(review, {
      taskQueue: team.taskQueue,
      workflowId: `team-review-${m.slice(1, -1)}`,
      args: [{ task: `Review T-1 ${m}`, system: SYSTEM, model: 'support', tools: ['lookup_ticket'] }],
    });
    // The agent child replays at the file's end on the suite's bundle; the team's `review` is not in that bundle.
    h.track(`${handle.workflowId}-agent`);
    expect((await handle.result()).agent.status).toBe('completed');
    expect((await teamKit.requests(m)).map((r) => r.body?.system)).toEqual([SYSTEM, SYSTEM]);
  });

  it('a steer sent while a tool works reached the model in the next request, and the scenario read it', async () => {
    const m = marker();
    const agents = new AgentClient({ client: team.client, taskQueue: team.taskQueue });
    const run = await agents.start({ task: `Wait, then report ${m}`, system: SYSTEM, model: 'steered', tools: ['wait_for_go'] }, { workflowId: `team-steer-${m.slice(1, -1)}` });
    h.track(run.workflowId);
    await gate.started.promise;
    await run.steer('Look at T-2 instead.', { by: 'alice' });
    gate.go.resolve();
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', turns: 2 });
    expect(result.output).toMatch(/^last said: Message from alice \(sent \S+, while you were working\): Look at T-2 instead\.$/);
    const [first, second] = await teamKit.requests(m);
    expect(first.body?.messages.map((x) => x.role)).toEqual(['system', 'user']);
    expect(second.body?.messages.map((x) => x.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(second.body?.messages.at(-1)?.content).toContain('Look at T-2 instead.');
  });

  it('refuses a worker without an address, or without an AgentPlugin, naming what is missing', async () => {
    await expect(runTestWorker({ address: '', plugins: [new AgentPlugin({ model: { baseUrl: teamKit.baseUrl }, workspace })] })).rejects.toThrow('runTestWorker: address must be');
    await expect(runTestWorker({ address, plugins: [] })).rejects.toThrow('runTestWorker: plugins must include an AgentPlugin');
  });
});

describe('AI SDK providers pointed at the kit, through AgentPlugin', () => {
  let aiKit: RunningScriptedModel;
  const workers: Record<string, RunningTestWorker> = {};
  const workspace = mkdtempSync(join(tmpdir(), 'team-ws-'));
  // createAnthropic speaks Anthropic's messages, createOpenAICompatible chat completions: one kit serves both.
  const providers: Record<string, { protocol: 'anthropic' | 'chat'; make: (baseURL: string) => ModelProvider }> = {
    '@ai-sdk/anthropic 3': { protocol: 'anthropic', make: (baseURL) => createAnthropic({ baseURL, apiKey: KEY }) },
    '@ai-sdk/openai-compatible 2': { protocol: 'chat', make: (baseURL) => createOpenAICompatible({ baseURL, name: 'kit', apiKey: KEY }) },
    '@ai-sdk/anthropic 4': { protocol: 'anthropic', make: (baseURL) => createAnthropicV4({ baseURL, apiKey: KEY }) },
    '@ai-sdk/openai-compatible 3': { protocol: 'chat', make: (baseURL) => createOpenAICompatibleV4({ baseURL, name: 'kit', apiKey: KEY }) },
  };

  beforeAll(async () => {
    aiKit = await startScriptedModel({ apiKey: KEY, scenarios: { support } });
    for (const [name, p] of Object.entries(providers)) {
      workers[name] = await runTestWorker({
        address: inject('temporalAddress'),
        // One bundle for the four workers (the suite's, of the harness's agentRun): bundling is seconds of CPU each.
        workflowBundle: { codePath: inject('workflowBundlePath') },
        plugins: [new AgentPlugin({ model: { provider: p.make(aiKit.baseUrl) }, workspace, tools: [lookupTicket], modelPrices: SUPPORT_PRICE })],
      });
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all(Object.values(workers).map((w) => w.stop()));
    await aiKit?.close();
  });

  it.each(Object.keys(providers))('%s: the run completes, and the kit logged its system prompt and tools in its protocol', async (name) => {
    const m = marker();
    const run = await new AgentClient({ client: workers[name].client, taskQueue: workers[name].taskQueue }).start({ task: `Triage T-1 ${m}`, system: SYSTEM, model: 'support', tools: ['lookup_ticket'] }, { workflowId: `ai-sdk-kit-${m.slice(1, -1)}` });
    h.track(run.workflowId);
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', turns: 2 });
    expect(result.output).toMatch(/^instructed: true; tools: lookup_ticket; ticket: /);
    const requests = await aiKit.requests(m);
    expect(requests.map((r) => [r.protocol, r.status])).toEqual([
      [providers[name].protocol, 200],
      [providers[name].protocol, 200],
    ]);
    expect(requests[0].body).toMatchObject({ system: SYSTEM, model: 'support', tools: [{ name: 'lookup_ticket', description: 'Look a support ticket up by id.' }] });
    // Anthropic's API requires max_tokens; chat completions go without unless the run sets one.
    if (providers[name].protocol === 'anthropic') expect(requests[0].body?.settings.maxTokens).toEqual(expect.any(Number));
  });
});
