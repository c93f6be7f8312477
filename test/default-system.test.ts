// The worker's default instructions (issue 37, item 4): AGENT_DEFAULT_SYSTEM
// (AgentPlugin's runDefaults.system) is the system prompt of a run whose input
// gives none, e.g. a run started by `temporal workflow start` from ops
// tooling. Proven on a real worker process configured by its environment, the
// request as the model activity sends it (`debug` writes it to the trace).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentInput } from '../common/contract.js';
import { pluginOptionsFromEnv } from '../worker/env-options.js';
import { freshWorkspace, useHarness } from './helpers/harness.js';
import { temporalOk } from './helpers/temporal-cli.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';

const h = useHarness({ worker: false });
const DEFAULT_SYSTEM = `You answer for the support team ${randomUUID().slice(0, 8)}. Be brief.`;
let worker: WorkerProcess;

beforeAll(async () => {
  worker = await startWorkerProcess({ taskQueue: h.taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, env: { AGENT_DEFAULT_SYSTEM: DEFAULT_SYSTEM } });
});
afterAll(async () => {
  await worker?.kill();
});

/** The system message of each model request the run sent (null: the request had none). */
const systemsSent = (workflowId: string): (string | null)[] =>
  h
    .trace(workflowId)
    .filter((l) => l.type === 'model_request')
    .map((l) => {
      const first = (l.messages as { role: string; content: string }[])[0];
      return first.role === 'system' ? first.content : null;
    });

const run = async (extra: Partial<AgentInput>) => {
  const id = `sys-${randomUUID().slice(0, 8)}`;
  const r = await h.client.workflow.execute('agentRun', { taskQueue: h.taskQueue, workflowId: id, args: [{ task: 'Which file mentions a timeout?', model: 'plan', workspace: freshWorkspace(), debug: true, ...extra }] });
  expect(r.status).toBe('completed');
  return id;
};

describe('AGENT_DEFAULT_SYSTEM', () => {
  it('is the system prompt of a run started by `temporal workflow start` without one', async () => {
    const id = `sys-cli-${randomUUID().slice(0, 8)}`;
    await temporalOk(h.address, 'workflow', 'start', '--type', 'agentRun', '--task-queue', h.taskQueue, '--workflow-id', id, '--input', JSON.stringify({ task: 'Which file mentions a timeout?', workspace: freshWorkspace(), debug: true }));
    h.track(id);
    expect((await h.client.workflow.getHandle(id).result()).status).toBe('completed');
    const sent = systemsSent(id);
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.every((s) => s === DEFAULT_SYSTEM)).toBe(true);
  });

  it("gives way to the input's own system prompt, and to an explicit null (none)", async () => {
    expect(systemsSent(await run({ system: 'Only the input speaks.' }))[0]).toBe('Only the input speaks.');
    expect(systemsSent(await run({ system: null }))[0]).toBeNull();
  });

  it('is read from the environment into runDefaults.system; empty counts as unset, and a refusal names the variable', () => {
    expect(pluginOptionsFromEnv({ AGENT_DEFAULT_SYSTEM: 'Be brief.' }).plugin.runDefaults).toMatchObject({ system: 'Be brief.' });
    expect(pluginOptionsFromEnv({ AGENT_DEFAULT_SYSTEM: '' }).plugin.runDefaults?.system).toBeUndefined();
    expect(() => pluginOptionsFromEnv({ AGENT_DEFAULT_SYSTEM: '   ' })).toThrow(/AGENT_DEFAULT_SYSTEM must not be empty/);
    expect(() => pluginOptionsFromEnv({ AGENT_DEFAULT_SYSTEM: 'x'.repeat(100_001) })).toThrow(/AGENT_DEFAULT_SYSTEM must be at most 100000 characters/);
  });
});
