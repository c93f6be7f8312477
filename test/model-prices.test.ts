// Honest prices (issue 37, item 6): a run with a USD budget on a model the
// worker has no price for is refused at start (it used to be charged $2/$12
// without a word, so its cap meant nothing); a `"*"` entry prices every model
// the list does not name; a listed model's price is what its runs are charged.
import { WorkflowFailedError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelPricesFromEnv } from '../node/config.js';
import { startProvider, type RunningProvider } from '../dev/provider/server.js';
import type { AgentInput } from '../common/contract.js';
import { freshWorkspace, providerRequests, useHarness } from './helpers/harness.js';

const h = useHarness({ worker: false });
let provider: RunningProvider;
const workers: { taskQueue: string; shutdown(): Promise<void> }[] = [];
let unpriced: string;
let starPriced: string;

// A team's model name the scripted provider answers to (as a real provider would), with no built-in price.
const TEAM_MODEL = 'claude-sonnet-4-5';

beforeAll(async () => {
  provider = await startProvider({ scenarios: { [TEAM_MODEL]: () => ({ type: 'answer', content: 'Done.' }) } });
  const bare = await h.startWorker({ taskQueue: `prices-bare-${randomUUID().slice(0, 8)}`, llmBaseUrl: provider.url });
  const star = await h.startWorker({ taskQueue: `prices-star-${randomUUID().slice(0, 8)}`, llmBaseUrl: provider.url, modelPrices: { '*': { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } } });
  workers.push(bare, star);
  unpriced = bare.taskQueue;
  starPriced = star.taskQueue;
});
afterAll(async () => {
  for (const w of workers) await w.shutdown();
  await provider?.close();
});

const start = (taskQueue: string, input: Partial<AgentInput>) =>
  h.client.workflow.start('agentRun', { taskQueue, workflowId: `prices-${randomUUID().slice(0, 8)}`, args: [{ task: 'Summarise the ticket.', model: TEAM_MODEL, workspace: freshWorkspace(), ...input }] });

describe('a model without a price', () => {
  it('under the default USD budget is refused at start: InvalidInput naming the model, modelPrices / AGENT_MODEL_PRICES and "*"; no model call made', async () => {
    const handle = await start(unpriced, {});
    const err = await handle.result().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toMatchObject({ type: 'InvalidInput', nonRetryable: true });
    expect(cause?.message).toContain(`model "${TEAM_MODEL}" has no price, and a USD budget (limits.maxBudgetUsd 1) needs one`);
    expect(cause?.message).toMatch(/AGENT_MODEL_PRICES|modelPrices/);
    expect(cause?.message).toContain('a "*" entry prices every model it does not list');
    expect(await providerRequests(provider.url, 'Summarise the ticket.')).toHaveLength(0);
  });

  it('runs without a USD budget, or with prices in its input', async () => {
    expect(await (await start(unpriced, { limits: { maxTurns: 3, maxBudgetUsd: null } })).result()).toMatchObject({ status: 'completed' });
    const r = await (await start(unpriced, { pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } })).result();
    expect(r.status).toBe('completed');
    expect(r.costUsd).toBeCloseTo((r.usage.promptTokens * 3 + r.usage.completionTokens * 15) / 1e6, 12);
  });

  it('is priced by a "*" entry: the run starts and is charged at that price, not the old silent $2/$12', async () => {
    const r = await (await start(starPriced, { limits: { maxBudgetUsd: 0.05 } })).result();
    expect(r.status).toBe('completed');
    expect(r.usage.promptTokens).toBeGreaterThan(0);
    expect(r.costUsd).toBeCloseTo((r.usage.promptTokens * 3 + r.usage.completionTokens * 15) / 1e6, 12);
  });

  it("the scripted provider's own models keep their price on the same worker: plan runs at $2/$12", async () => {
    const r = await h.client.workflow.execute('agentRun', { taskQueue: starPriced, workflowId: `prices-plan-${randomUUID().slice(0, 8)}`, args: [{ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace() }] });
    expect(r.status).toBe('completed');
    expect(r.costUsd).toBeCloseTo((r.usage.promptTokens * 2 + r.usage.completionTokens * 12) / 1e6, 12);
  });
});

describe('the price file of docs/cost.md', () => {
  it('parses as the worker reads AGENT_MODEL_PRICES: Claude Sonnet 4.5 with its cache rates, "*" for every other model', () => {
    const doc = readFileSync(new URL('../docs/cost.md', import.meta.url), 'utf8');
    const value = /AGENT_MODEL_PRICES='([^']+)' npm run worker/.exec(doc)?.[1];
    expect(value, 'docs/cost.md shows AGENT_MODEL_PRICES=\'…\' npm run worker').toBeDefined();
    const prices = modelPricesFromEnv(value);
    expect(prices['claude-sonnet-4-5']).toMatchObject({ inputPerMTokUsd: 3, outputPerMTokUsd: 15, cacheReadPerMTokUsd: 0.3, cacheWritePerMTokUsd: 3.75 });
    expect(prices['*']).toMatchObject({ inputPerMTokUsd: 5, outputPerMTokUsd: 25 });
  });
});
