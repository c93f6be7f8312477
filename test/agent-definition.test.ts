// Issue 37's whole promise in one run, as ops start it: `temporal workflow
// start` with runContext, outputSchema and modelSettings. The team's tool
// reads the tenant from ctx.run.context (the model never gets it), the first
// answer misses the schema and is told so, the second is valid, the run
// completes with structuredOutput, and every request the provider received
// carried the settings and none carried the context.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, type ToolRunInfo } from '../activities/tools/define-tool.js';
import { Toolset } from '../activities/tools/toolset.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { statusQuery } from '../common/run-messages.js';
import { cliRunResult, temporalOk } from './helpers/temporal-cli.js';
import { freshWorkspace, marker, providerRequests, useHarness } from './helpers/harness.js';

const h = useHarness({ worker: false });

/** What each call of `open_tickets` saw of its run. */
const seen: ToolRunInfo[] = [];
// A tool scoped to the caller's tenant: it reads the tenant from the run context, never from the model's arguments.
const openTickets = defineTool({
  name: 'open_tickets',
  description: 'Counts the open tickets of the current customer.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  readOnly: true,
  run: async (ctx) => {
    seen.push(ctx.run);
    const tenant = (ctx.run.context as { tenant?: unknown }).tenant;
    return tenant === 'acme' ? 'errors.log: 3 open tickets' : 'no such tenant';
  },
});

let worker: { taskQueue: string; shutdown(): Promise<void> };
beforeAll(async () => {
  worker = await h.startWorker({ toolset: new Toolset([...BUILTIN_TOOLS, openTickets]) });
}, 120_000);
afterAll(async () => {
  await worker?.shutdown();
});

const SCHEMA = {
  type: 'object',
  properties: { file: { type: 'string' }, timeoutMs: { type: 'integer' } },
  required: ['file', 'timeoutMs'],
  additionalProperties: false,
};

describe('an agent definition started from ops tooling', () => {
  it('`temporal workflow start` with runContext, outputSchema and modelSettings: the tool saw the context, the model did not, the provider got the settings, the answer matches the schema after one retry', async () => {
    const m = marker();
    const secret = `acme-secret-${randomUUID()}`;
    const runContext = { tenant: 'acme', user: 'u-7', ticket: 'T-1', secret };
    // Turn 1 calls the tool; turn 2 answers JSON that misses `timeoutMs`; turn 3, told so, answers valid JSON.
    const script = [[{ name: 'open_tickets', args: {} }], '{"file": "errors.log"}', '{"file": "errors.log", "timeoutMs": 30000}'];
    const input = {
      task: `Which file, and after how long? ${m} script: ${JSON.stringify(script)}`,
      model: 'script',
      tools: ['open_tickets'],
      workspace: freshWorkspace(),
      runContext,
      outputSchema: SCHEMA,
      modelSettings: { temperature: 0, seed: 7, maxOutputTokens: 400, toolChoice: 'auto' },
    };
    const workflowId = `definition-${randomUUID().slice(0, 8)}`;
    await temporalOk(h.address, 'workflow', 'start', '--type', 'agentRun', '--task-queue', worker.taskQueue, '--workflow-id', workflowId, '--input', JSON.stringify(input));
    h.track(workflowId);
    const r = await cliRunResult(h.client, h.address, workflowId);

    expect(r).toMatchObject({ status: 'completed', turns: 3, structuredOutput: { file: 'errors.log', timeoutMs: 30000 } });
    // The tool saw the caller's context and the run's id.
    expect(seen.find((s) => s.workflowId === workflowId)?.context).toEqual(runContext);
    // Ops see whose run it is.
    const status = await h.client.workflow.getHandle(workflowId).query(statusQuery);
    expect(status).toMatchObject({ runContext });
    // Every request carried the settings and the schema; none carried the context.
    const requests = await providerRequests(h.providerUrl, m);
    expect(requests).toHaveLength(3);
    for (const req of requests) {
      expect(req.options).toMatchObject({ temperature: 0, seed: 7, max_tokens: 400, tool_choice: 'auto', response_format: { type: 'json_schema' } });
      expect(JSON.stringify(req.body)).not.toContain(secret);
      expect(JSON.stringify(req.body)).not.toContain('u-7');
    }
    // The miss went back to the model as the validator's words.
    expect(JSON.stringify(requests[2].body?.messages.at(-1))).toContain('timeoutMs');
    // What the retry cost: reported in the closing note (three turns, the second a miss).
    console.log(`structured run with one retry: turns ${r.turns}, costUsd ${r.costUsd}, prompt tokens per turn ${JSON.stringify(r.promptTokensPerTurn)}`);
  });
});
