// Attacks on the settings (issue 33, item 6, the smaller ones): a port that is
// not a port passes no start-up check, and a refusal names the setting the
// way it was given (the plugin option, or the environment variable).
import { WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../common/config.js';
import { PROJECT_ROOT } from '../../common/project-root.js';
import { AgentPlugin } from '../../worker/index.js';
import { useHarness } from '../helpers/harness.js';
import type { agentRun } from '../../workflows/index.js';

const h = useHarness({ worker: false });

/** A process of the project started as `npm run …` starts it, with `env` on top of a clean environment: its exit code and output. */
function runEntry(entry: string, env: Record<string, string>): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', entry], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TEMPORAL_ADDRESS: '127.0.0.1:1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('ports that are not ports', () => {
  it('the configuration check refuses CODEC_PORT=abc and METRICS_PORT=99999, naming the variable and the range', () => {
    expect(() => loadConfig({ CODEC_PORT: 'abc' })).toThrow(/^CODEC_PORT must be a port number from 1 to 65535, got "abc"$/);
    expect(() => loadConfig({ METRICS_PORT: '99999' })).toThrow(/^METRICS_PORT must be a port number from 1 to 65535, or off, got "99999"$/);
    expect(() => loadConfig({ TEMPORAL_UI_PORT: '70000' })).toThrow(/^TEMPORAL_UI_PORT must be a port number from 1 to 65535, got "70000"$/);
    expect(() => loadConfig({ PORT: '1e3' })).toThrow(/^PORT must be a port number from 1 to 65535, got "1e3"$/);
    // The edges stand.
    expect(loadConfig({ CODEC_PORT: '65535', METRICS_PORT: '1' }).metricsAddress).toBe('127.0.0.1:1');
  });

  it('the codec server and the worker stop at start with that line', { timeout: 120_000 }, () => {
    const codec = runEntry('client/codec-server-main.ts', { CODEC_PORT: 'abc' });
    expect(codec.status).toBe(1);
    expect(codec.output).toContain('codec server not started: CODEC_PORT must be a port number from 1 to 65535, got "abc"');
    const worker = runEntry('worker/main.ts', { METRICS_PORT: '99999' });
    expect(worker.status).not.toBe(0);
    expect(worker.output).toContain('METRICS_PORT must be a port number from 1 to 65535, or off, got "99999"');
  });
});

describe('a refusal names the setting as it was given', () => {
  it("a hard budget on a model the plugin's modelPrices option does not list names the option, not AGENT_MODEL_PRICES", { timeout: 120_000 }, async () => {
    const connection = await NativeConnection.connect({ address: h.address });
    const taskQueue = `prices-${randomUUID().slice(0, 8)}`;
    const plugin = new AgentPlugin({
      model: { baseUrl: h.providerUrl },
      workspace: mkdtempSync(join(tmpdir(), 'prices-ws-')),
      traceDir: mkdtempSync(join(tmpdir(), 'prices-trace-')),
      modelPrices: { 'house-model-13b': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    });
    const worker = await Worker.create({ connection, taskQueue, workflowBundle: { codePath: inject('workflowBundlePath') }, plugins: [plugin] });
    h.replayQueue(taskQueue);
    const done = worker.run();
    try {
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue,
        workflowId: `prices-${randomUUID().slice(0, 8)}`,
        args: [{ task: 'Which file mentions a timeout?', model: 'house-model-7b', limits: { maxBudgetUsd: 0.05, budgetMode: 'hard' } }],
      });
      const err = await handle.result().then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const message = (err as WorkflowFailedError).cause?.message ?? '';
      expect(message).toContain("list the model in the worker's AgentPlugin option modelPrices");
      expect(message).not.toContain('AGENT_MODEL_PRICES');
    } finally {
      worker.shutdown();
      await done;
      await connection.close();
    }
  });
});
