// Starts (or reuses) a Temporal dev server: the official CLI's
// `temporal server start-dev`, with a SQLite file so runs survive a server
// restart, the Web UI on, nothing fetched from the internet, and our search
// attributes registered.
import { Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes.js';
import { requireSearchAttributes } from '../search-attribute-check.js';
import { findTemporalCli } from './temporal-cli.js';

/**
 * Server settings for agent loops, on by default for every server this project
 * starts (override a key through `dynamicConfig`). A loop steps one workflow
 * task at a time, and after each activity the history service loads the next
 * task through a token bucket of `history.transferProcessorMaxPollRPS` loads
 * per second per shard — 20 by default, and the dev server has one shard — so
 * past a burst of ~30 steps every step waited ~36 ms for its token (measured
 * with the server's `task_latency_load`). At 1,000 the wait is ~2 ms. The cost:
 * more transfer-queue reads per shard when it is busy; a production cluster
 * has many shards (and Temporal Cloud does not expose the knob).
 */
export const AGENT_LOOP_DYNAMIC_CONFIG: Record<string, unknown> = {
  'history.transferProcessorMaxPollRPS': 1000,
  // Eager activity dispatch: an activity the loop schedules on its own task
  // queue goes back to the worker with the workflow task's answer when the
  // worker has a free slot, instead of through matching (a task written, a
  // poll answered). The SDK asks for it by default (ActivityOptions
  // allowEagerDispatch); the server grants it only with this on.
  'system.enableActivityEagerExecution': true,
};

export interface DevServerOptions {
  port: number;
  /** null: no Web UI. */
  uiPort: number | null;
  /** null: in memory, gone with the process. */
  dbFile: string | null;
  /** Extra `--dynamic-config-value KEY=JSON` settings. */
  dynamicConfig?: Record<string, unknown>;
  /** Remote codec endpoint the Web UI calls to show compressed payloads. */
  uiCodecEndpoint?: string;
  /** Where the server's own output goes (default: discarded). */
  logFile?: string;
  /** Serve the server's Prometheus metrics on this port (`/metrics`); unset: none. */
  metricsPort?: number;
  binary?: string;
  startTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  /** The process we started, or null when a running server was reused. */
  child: ChildProcess | null;
  stop(): Promise<void>;
}

/** A TCP port nobody listens on right now. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Whether nothing listens on this port of 127.0.0.1 right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Connects to a server at `address` if one answers within `timeoutMs`. */
export async function tryConnect(address: string, timeoutMs: number): Promise<Connection | null> {
  try {
    const conn = await Connection.connect({ address, connectTimeout: timeoutMs });
    await conn.healthService.check({});
    return conn;
  } catch {
    return null;
  }
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const address = `127.0.0.1:${opts.port}`;
  const running = await tryConnect(address, 1000);
  if (running) {
    await requireSearchAttributes(running, 'default', 'create');
    await running.close();
    return { address, child: null, stop: async () => {} };
  }
  // Something else on the port: say so, instead of a server that dies with a log path.
  for (const [port, what, env] of [[opts.port, 'Temporal gRPC', 'TEMPORAL_DEV_PORT'], ...(opts.uiPort !== null ? [[opts.uiPort, 'Web UI', 'TEMPORAL_UI_PORT'] as const] : [])] as const) {
    if (!(await isPortFree(port))) {
      throw new Error(`port ${port} (${what}) is busy and no Temporal server answers there: free it, set ${env} to another port, or point TEMPORAL_ADDRESS at a running server`);
    }
  }
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn'];
  if (opts.uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(opts.uiPort), '--ui-disable-news-fetch');
  if (opts.uiPort !== null && opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  if (opts.metricsPort !== undefined) args.push('--metrics-port', String(opts.metricsPort));
  if (opts.dbFile) {
    mkdirSync(dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries({ ...AGENT_LOOP_DYNAMIC_CONFIG, ...opts.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  const out = opts.logFile ? openSync(opts.logFile, 'a') : 'ignore';
  const child = spawn(opts.binary ?? findTemporalCli(), args, { stdio: ['ignore', out, out] });
  let exited: string | null = null;
  child.on('exit', (code, sig) => (exited = `exited with ${code ?? sig}`));

  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) throw new Error(`temporal server start-dev ${exited}${opts.logFile ? `; see ${opts.logFile}` : ''}`);
    const conn = await tryConnect(address, 1000);
    if (conn) {
      // The flag registers search attributes only when the namespace is
      // created; an existing SQLite file needs them added here.
      await requireSearchAttributes(conn, 'default', 'create');
      await conn.close();
      break;
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`temporal server start-dev did not answer on ${address} within ${opts.startTimeoutMs ?? 60_000} ms`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    address,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}
