// Attacks on the run context (issue 37, item 1): what a caller may put in
// `runContext` (too big, too deep, not an object), what a tool may do with it
// (mutate its copy), and a workflow id used again by another tenant's run, on
// a worker that still remembers the first run's context.
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../activities/tools/define-tool.js';
import { Toolset } from '../../activities/tools/toolset.js';
import { BUILTIN_TOOLS } from '../../activities/tools/builtin.js';
import { MAX_RUN_CONTEXT_BYTES, MAX_RUN_CONTEXT_DEPTH } from '../../common/run-context.js';
import { statusQuery } from '../../common/run-messages.js';
import type { AgentInput } from '../../common/contract.js';
import { freshWorkspace, useHarness } from '../helpers/harness.js';
import { temporalOk } from '../helpers/temporal-cli.js';
import { modelPricesFromEnv } from '../../node/config.js';
import { AgentPlugin } from '../../worker/index.js';

const h = useHarness({ worker: false });

const seen = new Map<string, unknown[]>();
/** Records the context it got, then vandalises its copy: the next call must not see the damage. */
const grabby = defineTool({
  name: 'grabby',
  description: 'Reads the run context and scribbles on it.',
  parameters: { type: 'object', properties: { tag: { type: 'string' }, n: { type: 'number' } }, required: ['tag'], additionalProperties: false },
  readOnly: true,
  run: async (ctx, args) => {
    seen.set(args.tag, [...(seen.get(args.tag) ?? []), structuredClone(ctx.run.context)]);
    const context = ctx.run.context as Record<string, unknown>;
    context.tenant = 'evil';
    delete context.user;
    return 'ok';
  },
});
const toolset = new Toolset([...BUILTIN_TOOLS, grabby]);
let queue: string;
const workers: { shutdown(): Promise<void> }[] = [];

beforeAll(async () => {
  queue = `rc-attack-${randomUUID().slice(0, 8)}`;
  // Loop and tools on separate workers: the tools' worker learns contexts by asking runs, and remembers them.
  workers.push(await h.startWorker({ taskQueue: queue, toolset, loopOnly: true }));
  workers.push(await h.startWorker({ taskQueue: queue, toolset, activitiesOnly: true }));
});
afterAll(async () => {
  for (const w of workers) await w.shutdown();
});

const script = (tag: string, turns: number) => `script: ${JSON.stringify(Array.from({ length: turns }, (_, n) => [{ name: 'grabby', args: { tag, n } }]))}`;
const base = (extra: Record<string, unknown>): AgentInput => ({ task: 'hello', model: 'plan', workspace: freshWorkspace(), ...extra }) as AgentInput;

/** The run fails at once with a non-retryable InvalidInput naming `field`; its message. */
async function refused(input: AgentInput, field = 'runContext'): Promise<string> {
  const handle = await h.client.workflow.start('agentRun', { taskQueue: queue, workflowId: `rc-bad-${randomUUID().slice(0, 8)}`, args: [input] });
  const err = await handle.result().then(
    (r) => new Error(`accepted, ended ${r.status}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause).toMatchObject({ type: 'InvalidInput', nonRetryable: true, details: [{ field }] });
  expect(await handle.query(statusQuery)).toMatchObject({ status: 'failed', errorType: 'InvalidInput' });
  return cause?.message ?? '';
}

const nested = (levels: number): Record<string, unknown> => {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) v = { down: v };
  return v;
};

describe('runContext refusals name the field and the limit', () => {
  it('9 KiB is refused with the byte count and the 8 KiB limit', async () => {
    const message = await refused(base({ runContext: { blob: 'x'.repeat(9 * 1024) } }));
    expect(message).toMatch(/runContext/);
    expect(message).toContain(`the limit is ${MAX_RUN_CONTEXT_BYTES} bytes`);
  });

  it('bytes, not characters: 3 000 three-byte characters (9 000 bytes) are refused', async () => {
    const message = await refused(base({ runContext: { name: '€'.repeat(3000) } }));
    expect(message).toContain('9011 bytes'); // 9 000 + {"name":""}
  });

  it('exactly at the limit is accepted', async () => {
    const runContext = { blob: 'y'.repeat(MAX_RUN_CONTEXT_BYTES - '{"blob":""}'.length) };
    expect(JSON.stringify(runContext).length).toBe(MAX_RUN_CONTEXT_BYTES);
    const r = await h.client.workflow.execute('agentRun', { taskQueue: queue, workflowId: `rc-edge-${randomUUID().slice(0, 8)}`, args: [base({ runContext })] });
    expect(r.status).toBe('completed');
  });

  it(`nesting deeper than ${MAX_RUN_CONTEXT_DEPTH} levels is refused; ${MAX_RUN_CONTEXT_DEPTH} is accepted`, async () => {
    const message = await refused(base({ runContext: nested(MAX_RUN_CONTEXT_DEPTH + 1) }));
    expect(message).toMatch(/runContext.*nested more than 8 levels/);
    const r = await h.client.workflow.execute('agentRun', { taskQueue: queue, workflowId: `rc-deep-${randomUUID().slice(0, 8)}`, args: [base({ runContext: nested(MAX_RUN_CONTEXT_DEPTH) })] });
    expect(r.status).toBe('completed');
  });

  it.each([
    ['an array', [{ tenant: 'acme' }]],
    ['a string', 'tenant=acme'],
    ['a number', 42],
    ['null', null],
    ['true', true],
  ])('%s is refused: it must be a JSON object', async (what, value) => {
    const message = await refused(base({ runContext: value }));
    expect(message).toMatch(/runContext must be a JSON object/);
    expect(message).toContain(`got ${what === 'true' ? 'a boolean' : what}`);
  });

  it('through `temporal workflow start --input`: an array is refused the same way', async () => {
    const id = `rc-cli-${randomUUID().slice(0, 8)}`;
    await temporalOk(h.address, 'workflow', 'start', '--type', 'agentRun', '--task-queue', queue, '--workflow-id', id, '--input', JSON.stringify({ task: 'x', runContext: ['acme'] }));
    h.track(id);
    const err = await h.client.workflow.getHandle(id).result().catch((e: unknown) => e);
    expect((err as WorkflowFailedError).cause).toMatchObject({ type: 'InvalidInput', message: expect.stringMatching(/runContext must be a JSON object/) });
  });
});

describe('runContext in the tools', () => {
  it("a tool that mutates its context changes no other call's", async () => {
    const tag = `mut-${randomUUID().slice(0, 8)}`;
    const runContext = { tenant: 'acme', user: 'u-1' };
    const r = await h.client.workflow.execute('agentRun', { taskQueue: queue, workflowId: `rc-${tag}`, args: [{ task: script(tag, 3), model: 'script', tools: ['grabby'], workspace: freshWorkspace(), runContext }] });
    expect(r).toMatchObject({ status: 'completed', toolRuns: 3 });
    expect(seen.get(tag)).toEqual([runContext, runContext, runContext]);
  });

  it("a workflow id used again by another tenant's run: its tools see the new tenant, never the one the worker remembers", async () => {
    const id = `rc-reused-${randomUUID().slice(0, 8)}`;
    const first = `a-${randomUUID().slice(0, 8)}`;
    const second = `b-${randomUUID().slice(0, 8)}`;
    const run = (tag: string, tenant: string) => h.client.workflow.execute('agentRun', { taskQueue: queue, workflowId: id, args: [{ task: script(tag, 1), model: 'script', tools: ['grabby'], workspace: freshWorkspace(), runContext: { tenant } }] });
    expect((await run(first, 'tenant-a')).status).toBe('completed');
    expect((await run(second, 'tenant-b')).status).toBe('completed');
    expect(seen.get(first)).toEqual([{ tenant: 'tenant-a' }]);
    expect(seen.get(second)).toEqual([{ tenant: 'tenant-b' }]);
  });
});

describe('prices that would make a USD budget mean nothing', () => {
  it('an unpriced model under a soft budget is refused at start, naming the model and the price setting', async () => {
    const message = await refused(base({ model: 'gpt-unlisted', limits: { maxBudgetUsd: 0.01 } }), 'model');
    expect(message).toContain('model "gpt-unlisted" has no price, and a USD budget (limits.maxBudgetUsd 0.01) needs one');
    expect(message).toMatch(/AGENT_MODEL_PRICES|modelPrices/);
  });

  it('half a price in the input does not price an unlisted model: the missing rate is not silently the default', async () => {
    const message = await refused(base({ model: 'gpt-unlisted', pricing: { inputPerMTokUsd: 1 } }), 'model');
    expect(message).toContain('has no price');
  });

  it.each([
    ['negative', -1, 'must be a number >= 0, got -1'],
    // JSON has no NaN or Infinity: the client's encoding sends null, refused all the same (never read as "free").
    ['NaN', Number.NaN, 'must be a number >= 0, got null'],
    ['Infinity', Number.POSITIVE_INFINITY, 'must be a number >= 0, got null'],
  ])('a %s price in the input is refused, naming the field', async (_what, value, rule) => {
    const message = await refused(base({ pricing: { inputPerMTokUsd: value, outputPerMTokUsd: 1 } }), 'pricing.inputPerMTokUsd');
    expect(message).toContain(rule);
  });

  it('a negative or unbounded "*" price in AGENT_MODEL_PRICES stops the worker at start, naming the variable', () => {
    expect(() => modelPricesFromEnv('{"*": {"inputPerMTokUsd": -3, "outputPerMTokUsd": 15}}')).toThrow(/AGENT_MODEL_PRICES \*\.inputPerMTokUsd must be a number >= 0, got -3/);
    // 1e400 reads as Infinity: the closest JSON comes to NaN.
    expect(() => modelPricesFromEnv('{"*": {"inputPerMTokUsd": 3, "outputPerMTokUsd": 1e400}}')).toThrow(/AGENT_MODEL_PRICES \*\.outputPerMTokUsd must be a number >= 0/);
  });

  it("a NaN price in the plugin's modelPrices option stops the worker at start, naming the option", () => {
    expect(() => new AgentPlugin({ model: { baseUrl: h.providerUrl }, workspace: h.workspaceRoot, modelPrices: { '*': { inputPerMTokUsd: Number.NaN, outputPerMTokUsd: 1 } } })).toThrow(/modelPrices\.\*\.inputPerMTokUsd must be a number >= 0/);
  });
});
