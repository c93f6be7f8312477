// `npm start` as a person meets it: a busy port is one line naming what and
// the variable that moves it; a failure after the dev server started stops
// everything it started; a server left behind by a killed `npm start` is
// stopped and replaced, a server of a live one is shared; SIGTERM stops it
// all. Each checked by pid and port after the process has exited.
import { Client, Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { dataConverter } from '../node/payload-codec.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { findFreePort, isPortFree } from '../worker/dev-server/dev-server.js';
import { replayRuns, runsOnQueues, waitFor } from './helpers/harness.js';
import { descendantsOf, isAlive, parentOf, processesWith } from './helpers/processes.js';
import { isDocumented } from './helpers/documented.js';

interface Stack {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** `npm start`'s entry point (npm runs `tsx dev/stack/start.ts`), in its own folders and on its own ports. */
function npmStart(env: Record<string, string>, ...args: string[]): Stack {
  const child = spawn(process.execPath, ['--import', 'tsx', 'dev/stack/start.ts', ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function stackEnv(): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'npm-start-'));
  return {
    TEMPORAL_DEV_PORT: String(await findFreePort()),
    TEMPORAL_UI_PORT: String(await findFreePort()),
    TEMPORAL_DB_FILE: join(dir, 'temporal.db'),
    PORT: String(await findFreePort()),
    CODEC_PORT: String(await findFreePort()),
    METRICS_PORT: 'off',
    TRACE_DIR: join(dir, 'traces'),
    AGENT_WORKSPACE: join(dir, 'workspace'),
    AGENT_TASK_QUEUE: `start-${randomUUID().slice(0, 8)}`,
    // The suite's bundle: the stack starts in seconds instead of bundling workflows/.
    WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
  };
}

async function occupy(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

/** `npm start` itself, as a terminal, `timeout` or a process manager runs it: SIGTERM goes to npm's pid only. */
function viaNpm(env: Record<string, string>, ...args: string[]): Stack {
  const child = spawn('npm', ['start', '--', ...args], { cwd: PROJECT_ROOT, env: { ...process.env, TEMPORAL_ADDRESS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** The dev servers on this port, by pid. */
const devServers = (env: Record<string, string>) => processesWith('start-dev', `--port ${env.TEMPORAL_DEV_PORT} `);
const recordOf = (env: Record<string, string>) => join(env.TEMPORAL_DB_FILE, '..', `temporal-server-${env.TEMPORAL_DEV_PORT}.json`);

describe('npm start that cannot start', () => {
  it.each([
    ['PORT', 'the scripted provider', ''],
    ['METRICS_PORT', 'Prometheus metrics', ' (or METRICS_PORT=off)'],
    ['CODEC_PORT', 'the codec server the Web UI calls', ''],
  ])('a busy %s that was set: one line naming %s and the variable, exit 2, no dev server started', { timeout: 120_000 }, async (name, what, extra) => {
    const env = await stackEnv();
    const port = await findFreePort();
    const busy = await occupy(port);
    try {
      const s = npmStart({ ...env, [name]: String(port) });
      expect(await s.exited).toBe(2);
      expect(s.output()).toBe(`npm start: port ${port} (${what}) is busy: free it, or set ${name} to another port${extra}\n`);
      expect(isDocumented(s.output())).toBe(true);
      expect(devServers(env)).toEqual([]);
    } finally {
      busy.close();
    }
  });

  it('a failure after the dev server and the provider started: one line, and both are stopped; busy default ports are said, not fatal', { timeout: 120_000 }, async () => {
    const env = await stackEnv();
    const missing = join(env.TEMPORAL_DB_FILE, '..', 'no-bundle.js');
    // The defaults of the extras, held (by this test, or already by another npm start).
    const held = await Promise.all([9464, 8888].map(async (p) => ((await isPortFree(p)) ? occupy(p) : null)));
    try {
      const s = npmStart({ ...env, METRICS_PORT: '', CODEC_PORT: '', WORKFLOW_BUNDLE_PATH: missing });
      expect(await s.exited).toBe(2);
      const lines = s.output().trim().split('\n');
      expect(lines.slice(0, 2)).toEqual([
        'metrics off: port 9464 is busy (another npm start?); set METRICS_PORT to serve them on another port',
        'codec server not started: port 8888 is busy (another npm start?); the Web UI calls what answers there, or set CODEC_PORT',
      ]);
      expect(lines.slice(0, 2).every(isDocumented)).toBe(true);
      expect(lines[2]).toMatch(/^Temporal dev server on 127\.0\.0\.1:\d+ /);
      expect(lines[3]).toBe(`scripted provider on http://127.0.0.1:${env.PORT}/v1`);
      expect(lines.slice(4)).toEqual([`npm start: WORKFLOW_BUNDLE_PATH names ${missing}, which does not exist: build the bundle there, or unset it to bundle workflows/ at start`]);
      expect(isDocumented(lines[4])).toBe(true);
      expect(devServers(env)).toEqual([]);
      expect(await isPortFree(Number(env.PORT))).toBe(true);
      expect(await isPortFree(Number(env.TEMPORAL_DEV_PORT))).toBe(true);
      expect(existsSync(recordOf(env))).toBe(false);
    } finally {
      for (const h of held) h?.close();
    }
  });

  it('PORT held by another server that answers /health: not taken for the scripted provider, one line naming PORT, exit 2 (issue 34, 5j)', { timeout: 120_000 }, async () => {
    const env = await stackEnv();
    const foreign = createHttpServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(req.url === '/health' ? '{"status":"ok"}' : '{}'));
    const port = await new Promise<number>((resolve) => foreign.listen(Number(env.PORT), '127.0.0.1', () => resolve(Number(env.PORT))));
    try {
      const s = npmStart(env);
      expect(await s.exited, s.output()).toBe(2);
      expect(s.output()).toBe(`npm start: port ${port} (the scripted provider) is busy: free it, or set PORT to another port\n`);
      expect(isDocumented(s.output())).toBe(true);
      expect(devServers(env)).toEqual([]);
    } finally {
      foreign.close();
    }
  });

  it('PORT taken while the dev server starts (after the check): one line naming the provider and PORT, and the dev server it started is stopped', { timeout: 120_000 }, async () => {
    const env = await stackEnv();
    const s = npmStart(env);
    // The ports were free when checked; the provider's is taken once the dev server is starting, before the provider listens.
    await waitFor('the dev server to be started', () => devServers(env).length > 0 || s.child.exitCode !== null);
    const busy = await occupy(Number(env.PORT));
    try {
      expect(await s.exited, s.output()).toBe(2);
      const lines = s.output().trim().split('\n');
      expect(lines[0]).toMatch(/^Temporal dev server on 127\.0\.0\.1:\d+ /);
      expect(lines.slice(1)).toEqual([`npm start: port ${env.PORT} (the scripted provider) is busy: free it, or set PORT to another port`]);
      expect(isDocumented(lines[1])).toBe(true);
      expect(devServers(env)).toEqual([]);
      expect(await isPortFree(Number(env.TEMPORAL_DEV_PORT))).toBe(true);
      expect(existsSync(recordOf(env))).toBe(false);
    } finally {
      busy.close();
    }
  });

  it('the dev server dying under a serving stack: one line naming its log, and the rest is stopped', { timeout: 120_000 }, async () => {
    const env = await stackEnv();
    const s = npmStart(env, '--serve');
    await waitFor('the stack to serve', () => s.output().includes('serving; Ctrl-C to stop'));
    const serverPid = (JSON.parse(readFileSync(recordOf(env), 'utf8')) as { pid: number }).pid;
    process.kill(serverPid, 'SIGKILL');
    expect(await s.exited).toBe(1);
    const last = s.output().trim().split('\n').at(-1) ?? '';
    expect(last).toBe(`npm start: the Temporal dev server exited (SIGKILL); see ${join(PROJECT_ROOT, '.data/temporal-server.log')}`);
    expect(isDocumented(last)).toBe(true);
    expect(await isPortFree(Number(env.PORT))).toBe(true);
    expect(await isPortFree(Number(env.CODEC_PORT))).toBe(true);
    expect(existsSync(recordOf(env))).toBe(false);
  });
});

describe('npm start stopped through npm', () => {
  it('SIGTERM to the npm process (not its group) stops the stack: no dev server, provider or worker left', { timeout: 180_000 }, async () => {
    const env = await stackEnv();
    const s = viaNpm(env, '--serve');
    let stack: number[] = [];
    try {
      await waitFor('the stack to serve', () => s.output().includes('serving; Ctrl-C to stop'));
      const serverPid = (JSON.parse(readFileSync(recordOf(env), 'utf8')) as { pid: number }).pid;
      // tsx, the stack's node process and the dev server.
      stack = descendantsOf(s.child.pid ?? 0);
      expect(stack).toContain(serverPid);
      s.child.kill('SIGTERM');
      await s.exited;
      await waitFor('the stack to stop', () => stack.every((pid) => !isAlive(pid)), 60_000);
      for (const port of [env.TEMPORAL_DEV_PORT, env.PORT, env.CODEC_PORT]) expect(await isPortFree(Number(port)), `port ${port}`).toBe(true);
      expect(existsSync(recordOf(env))).toBe(false);
    } finally {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      for (const pid of [...stack, ...devServers(env)]) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('npm start and the dev server of another npm start', () => {
  it('shares the server of a live npm start, replaces the one a killed npm start left, and SIGTERM leaves nothing', { timeout: 360_000 }, async () => {
    const env = await stackEnv();
    const first = npmStart(env, '--serve');
    let third: Stack | null = null;
    try {
      await waitFor('the first stack to serve', () => first.output().includes('serving; Ctrl-C to stop'));
      const serverPid = (JSON.parse(readFileSync(recordOf(env), 'utf8')) as { pid: number }).pid;
      expect(devServers(env)).toEqual([serverPid]);

      // A second npm start while the first serves: it shares the server and the provider, and leaves them running.
      const second = npmStart({ ...env, CODEC_PORT: String(await findFreePort()) });
      expect(await second.exited, second.output()).toBe(0);
      expect(second.output()).toContain(`reusing the Temporal dev server of the npm start running as pid ${first.child.pid}\n`);
      expect(isDocumented(`reusing the Temporal dev server of the npm start running as pid ${first.child.pid}`)).toBe(true);
      expect(second.output()).toContain(`reusing the scripted provider on port ${env.PORT}\n`);
      expect(second.output()).toMatch(/status=completed\n$/);
      expect(isAlive(serverPid)).toBe(true);
      // The run lives on this stack's server, which the test stops: it replays now.
      const client = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${env.TEMPORAL_DEV_PORT}` }), dataConverter: dataConverter() });
      try {
        const runs = await runsOnQueues(client, new Set([env.AGENT_TASK_QUEUE]));
        expect(runs).toHaveLength(1);
        await replayRuns(client, runs);
      } finally {
        await client.connection.close();
      }

      // The first killed outright: its server is left with another parent.
      first.child.kill('SIGKILL');
      await first.exited;
      expect(isAlive(serverPid)).toBe(true);
      expect(parentOf(serverPid)).not.toBe(first.child.pid);

      // The next npm start says so, stops it and starts its own.
      third = npmStart(env, '--serve');
      await waitFor('the third stack to serve', () => third?.output().includes('serving; Ctrl-C to stop'));
      expect(third.output()).toContain(`stopped the Temporal dev server (pid ${serverPid}) that an earlier npm start left running on port ${env.TEMPORAL_DEV_PORT}\n`);
      expect(isDocumented(`stopped the Temporal dev server (pid ${serverPid}) that an earlier npm start left running on port ${env.TEMPORAL_DEV_PORT}`)).toBe(true);
      expect(isAlive(serverPid)).toBe(false);
      const replacement = devServers(env);
      expect(replacement).toHaveLength(1);

      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
      expect(isAlive(replacement[0])).toBe(false);
      for (const port of [env.TEMPORAL_DEV_PORT, env.TEMPORAL_UI_PORT, env.PORT, env.CODEC_PORT]) expect(await isPortFree(Number(port)), `port ${port}`).toBe(true);
      expect(existsSync(recordOf(env))).toBe(false);
    } finally {
      for (const s of [first, third]) if (s && s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      for (const pid of devServers(env)) process.kill(pid, 'SIGKILL');
    }
  });
});
