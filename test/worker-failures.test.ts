// What a person meets running `npm run worker`: a failure to start is one
// line naming what and how to fix it, the process exits and leaves nothing
// behind; a server outage is one line when it starts and one when it ends;
// a normal start prints the worker's line, not webpack's report.
import { Client, Connection } from '@temporalio/client';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { PROJECT_ROOT } from '../node/project-root.js';
import { dataConverter } from '../node/payload-codec.js';
import { findFreePort, startDevServer } from '../worker/dev-server/dev-server.js';
import { replayRuns, useHarness, waitFor } from './helpers/harness.js';
import { startWorkerProcess } from './helpers/worker-process.js';
import { startWorkerProcess as startBareWorkerProcess } from './helpers/spawn-worker.js';
import { descendantsOf, isAlive, processesWith } from './helpers/processes.js';
import { isDocumented } from './helpers/documented.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness({ worker: false });

/** Runs `npm run worker`'s entry point to its exit. */
function workerExit(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; pid: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, AGENT_TASK_QUEUE: `never-${randomUUID().slice(0, 8)}`, TRACE_DIR: h.traceDir, AGENT_WORKSPACE: h.workspaceRoot, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr, pid: child.pid ?? 0 })));
}

/** A port something listens on that is not what the harness expects there. */
async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const port = await findFreePort();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, server };
}

describe('a worker that cannot start says why in one line', () => {
  it('no server at TEMPORAL_ADDRESS: the address and what to check, exit 1, no stack', async () => {
    const r = await workerExit({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'worker not started: cannot reach the Temporal server at 127.0.0.1:1 (TEMPORAL_ADDRESS): connection refused; check that the server is running and that TEMPORAL_ADDRESS names it\n',
    );
    expect(r.stdout).toBe('');
    expect(isDocumented(r.stderr)).toBe(true);
  });

  it('a busy METRICS_PORT: the port and the variable, exit 1', async () => {
    const busy = await occupiedPort();
    try {
      const r = await workerExit({ TEMPORAL_ADDRESS: h.address, METRICS_PORT: String(busy.port) });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`worker not started: port ${busy.port} (Prometheus metrics, METRICS_PORT) is busy: free it, set METRICS_PORT to another port, or METRICS_PORT=off\n`);
      expect(isDocumented(r.stderr)).toBe(true);
    } finally {
      busy.server.close();
    }
  });

  it('no TEMPORAL_ADDRESS and the dev server port held by something else: the port, the variable, nothing left running', async () => {
    const busy = await occupiedPort();
    const uiPort = await findFreePort();
    try {
      const r = await workerExit({ TEMPORAL_ADDRESS: '', TEMPORAL_DEV_PORT: String(busy.port), TEMPORAL_UI_PORT: String(uiPort), TEMPORAL_DB_FILE: join(h.workspaceRoot, 'never.db') });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `worker not started: port ${busy.port} (Temporal gRPC) is busy and no Temporal server answers there: free it, set TEMPORAL_DEV_PORT to another port, or point TEMPORAL_ADDRESS at a running server\n`,
      );
      expect(isDocumented(r.stderr)).toBe(true);
      expect(processesWith('start-dev', `--port ${busy.port}`)).toEqual([]);
    } finally {
      busy.server.close();
    }
  });
});

describe('a running worker', () => {
  it('prints its own line, not webpack\'s build report, and stops on SIGTERM with nothing left', { timeout: 120_000 }, async () => {
    // No prebuilt bundle: the worker bundles workflows/ itself, as `npm run worker` does.
    const worker = await startBareWorkerProcess({ address: h.address, taskQueue: `bundle-${randomUUID().slice(0, 8)}`, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, llmBaseUrl: inject('providerUrl') });
    worker.child.kill('SIGTERM');
    await worker.exited;
    expect(worker.child.exitCode).toBe(0);
    expect(worker.output()).toMatch(/^worker on 127\.0\.0\.1:\d+ \(TEMPORAL_ADDRESS\) namespace=default /);
    expect(worker.output()).not.toMatch(/webpack|asset workflow-bundle|Worker state changed|Workflow bundle created/);
    expect(isAlive(worker.child.pid ?? 0)).toBe(false);
  });

  it('SIGTERM to `npm run worker`\'s npm process (a process manager, `timeout`) stops the worker too', { timeout: 180_000 }, async () => {
    const child = spawn('npm', ['run', 'worker'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: `npm-${randomUUID().slice(0, 8)}`, TRACE_DIR: h.traceDir, AGENT_WORKSPACE: h.workspaceRoot, WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'), METRICS_PORT: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    let below: number[] = [];
    try {
      await waitFor('the worker to run', () => /^worker on /m.test(out));
      below = descendantsOf(child.pid ?? 0);
      expect(below.length).toBeGreaterThan(0);
      child.kill('SIGTERM');
      await waitFor('every process under npm to stop', () => below.every((pid) => !isAlive(pid)), 60_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const pid of below) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('a server outage is one "lost" line and one "reconnected" line, no raw retry warnings; runs go on after', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outage-'));
    const port = await findFreePort();
    const serverOpts = { port, uiPort: null, dbFile: join(dir, 'temporal.db'), logFile: join(dir, 'server.log'), startTimeoutMs: 60_000 };
    let server = await startDevServer(serverOpts);
    const taskQueue = `outage-${randomUUID().slice(0, 8)}`;
    const worker = await startWorkerProcess({ taskQueue, traceDir: h.traceDir, workspaceRoot: h.workspaceRoot, address: server.address });
    try {
      server.child?.kill('SIGKILL');
      await new Promise((r) => server.child?.once('exit', r));
      await waitFor('the lost line', () => worker.output().includes(`lost the Temporal server at ${server.address} (connection refused); the worker keeps retrying: check that the server is running`));
      server = await startDevServer(serverOpts);
      await waitFor('the reconnected line', () => /reconnected to the Temporal server at 127\.0\.0\.1:\d+ after \d+ s\n/.test(worker.output()));

      const lines = worker.output().trim().split('\n');
      expect(lines.filter((l) => l.startsWith('lost the Temporal server'))).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith('reconnected to the Temporal server'))).toHaveLength(1);
      // Nothing but the start line and those two: no core WARN lines, no colour codes.
      expect(lines).toHaveLength(3);
      expect(lines.slice(1).every(isDocumented)).toBe(true);
      expect(worker.output()).not.toMatch(/WARN|\x1b\[/);

      const client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: dataConverter() });
      try {
        const handle = await client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `after-outage-${randomUUID().slice(0, 8)}`, args: [{ task: 'Which file mentions a timeout?', model: 'plan' }] });
        expect((await handle.result()).status).toBe('completed');
        await replayRuns(client, [{ workflowId: handle.workflowId, runId: handle.firstExecutionRunId }]);
      } finally {
        await client.connection.close();
      }
    } finally {
      await worker.kill();
      await server.stop();
    }
  });
});
