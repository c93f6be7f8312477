// The compose stack's Temporal cluster, run natively: PostgreSQL, the schema
// job, the server as four service processes, and the namespace job — with the
// compose stack's own files (deploy/compose/setup-postgres.sh,
// deploy/compose/create-namespace.sh, deploy/dynamicconfig/agent-loop.yaml)
// and the environment docker-compose.yml gives each container, minus the
// containers. The server is temporalio/server's own program at the compose
// file's version (scripts/install-cluster-server.mjs builds it), configured as
// that image configures it: from environment variables through the config
// template built into temporal-server, so NUM_HISTORY_SHARDS, the dynamic
// config file and the database settings are the compose file's.
// One process per service (frontend, history, matching, worker), as users
// scale it: a test can kill the history service alone, or restart PostgreSQL.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, openSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { composeServiceEnv } from './compose-file.js';
import { findFreePort, isPortFree, tryConnect } from '../../worker/dev-server/dev-server.js';
import { startPostgres, type Postgres } from './postgres.js';
import { findTemporalCli } from '../../worker/dev-server/temporal-cli.js';
import { waitForPort } from '../../worker/dev-server/wait-for-port.js';

export const SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** What scripts/install-cluster-server.mjs provisions. */
export interface ServerInstall {
  version: string;
  server: string;
  sqlTool: string;
  schemaDir: string;
  /** The folder of initdb and postgres. */
  pgBin: string;
}

export interface ClusterOptions {
  /** The services' logs and the job scripts' output go here (default: a new folder in the system temp folder). */
  dir?: string;
  /** The frontend's gRPC port (default: a free one). */
  frontendPort?: number;
}

export interface TemporalCluster {
  /** The frontend, host:port, for clients and workers. */
  address: string;
  version: string;
  dir: string;
  postgres: Postgres;
  /** The pid of each service process now running (null while stopped). */
  pid(service: ServiceName): number | null;
  /** SIGKILL, as a crash: returns once the process is gone. */
  killService(service: ServiceName): Promise<void>;
  /** Starts the service again, with the same environment and ports; returns once it listens. */
  startService(service: ServiceName): Promise<void>;
  stop(): Promise<void>;
}

/** Builds (first time) or finds the server at the compose file's version. */
export function installClusterServer(): ServerInstall {
  const out = execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'install-cluster-server.mjs')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as ServerInstall;
}

/** Runs one of the compose stack's job scripts (deploy/compose/NAME) with `env`; throws with its output if it fails. */
function runComposeJob(name: string, env: Record<string, string>, logFile: string): void {
  const r = spawnSync('sh', [join(PROJECT_ROOT, 'deploy', 'compose', name)], { env, encoding: 'utf8', timeout: 300_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  appendFileSync(logFile, out);
  if (r.status !== 0) throw new Error(`deploy/compose/${name} exited ${r.status ?? r.signal}:\n${out.trim().split('\n').slice(-20).join('\n')}`);
}

export async function startCluster(opts: ClusterOptions = {}): Promise<TemporalCluster> {
  const install = installClusterServer();
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'agent-harness-cluster-'));
  mkdirSync(dir, { recursive: true });
  const basePath = `${dirname(install.server)}${delimiter}${process.env.PATH ?? ''}`;
  const baseEnv = { PATH: basePath, HOME: process.env.HOME ?? dir };

  // PostgreSQL, as the compose file's postgresql service (user, password). Its
  // data goes to the system temp folder, which its own user can reach when we are root.
  const pgEnv = composeServiceEnv('postgresql');
  const postgres = await startPostgres({ port: await findFreePort(), user: pgEnv.POSTGRES_USER, password: pgEnv.POSTGRES_PASSWORD, binDir: install.pgBin, logFile: join(dir, 'postgres.log') });
  const stopAll: (() => Promise<void>)[] = [() => postgres.stop()];
  try {
    // The schema job: its script, with the database where it runs here and
    // the module's schema files where the admin-tools image has them.
    runComposeJob('setup-postgres.sh', {
      ...baseEnv,
      ...composeServiceEnv('temporal-schema'),
      POSTGRES_SEEDS: '127.0.0.1',
      DB_PORT: String(postgres.port),
      SCHEMA_DIR: install.schemaDir,
    }, join(dir, 'setup-postgres.log'));

    // The server's environment: the compose file's, with loopback addresses and
    // free ports (every process gets them all: each finds the others' gRPC ports there).
    const ports: Record<string, string> = { FRONTEND_GRPC_PORT: String(opts.frontendPort ?? (await findFreePort())) };
    for (const s of ['FRONTEND', 'MATCHING', 'HISTORY', 'WORKER']) {
      if (s !== 'FRONTEND') ports[`${s}_GRPC_PORT`] = String(await findFreePort());
      // The cluster_membership table holds this port as a smallint.
      ports[`${s}_MEMBERSHIP_PORT`] = String(await freePortBelow(32768, Object.values(ports)));
    }
    ports.FRONTEND_HTTP_PORT = String(await findFreePort());
    const serverEnv: Record<string, string> = {
      ...baseEnv,
      ...composeServiceEnv('temporal'),
      POSTGRES_SEEDS: '127.0.0.1',
      DB_PORT: String(postgres.port),
      BIND_ON_IP: '127.0.0.1',
      ...ports,
    };
    // The image runs in /etc/temporal with deploy/dynamicconfig mounted at
    // config/dynamicconfig: the same relative DYNAMIC_CONFIG_FILE_PATH finds the same file here.
    const cwd = join(dir, 'server');
    mkdirSync(join(cwd, 'config'), { recursive: true });
    symlinkSync(join(PROJECT_ROOT, 'deploy', 'dynamicconfig'), join(cwd, 'config', 'dynamicconfig'));

    const procs = new Map<ServiceName, ChildProcess>();
    // The worker service serves no gRPC: it is up once it listens for membership.
    const readyPort = (s: ServiceName) => Number(ports[`${s.toUpperCase()}_${s === 'worker' ? 'MEMBERSHIP' : 'GRPC'}_PORT`]);
    const startService = async (service: ServiceName) => {
      const out = openSync(join(dir, `${service}.log`), 'a');
      const child = spawn(install.server, ['start', '--service', service], { cwd, env: serverEnv, stdio: ['ignore', out, out] });
      procs.set(service, child);
      let exited: string | null = null;
      child.once('exit', (code, sig) => (exited = `temporal-server --service ${service} exited with ${code ?? sig}; see ${join(dir, `${service}.log`)}`));
      await waitForPort(readyPort(service), 120_000, () => exited);
    };
    const halt = (service: ServiceName, signal: NodeJS.Signals) =>
      new Promise<void>((resolve) => {
        const c = procs.get(service);
        if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once('exit', () => resolve());
        c.kill(signal);
        setTimeout(() => c.kill('SIGKILL'), 15_000).unref();
      });
    stopAll.unshift(() => Promise.all(SERVICES.map((s) => halt(s, 'SIGTERM'))).then(() => {}));

    // On a fresh database every service races to write the cluster metadata:
    // history first, the others once it listens.
    await startService('history');
    await Promise.all(SERVICES.filter((s) => s !== 'history').map(startService));
    const address = `127.0.0.1:${ports.FRONTEND_GRPC_PORT}`;
    const conn = await tryConnect(address, 30_000);
    if (!conn) throw new Error(`the frontend at ${address} does not answer; see ${join(dir, 'frontend.log')}`);
    await conn.close();

    // The namespace job: the temporal CLI on PATH, as in the admin-tools image.
    runComposeJob('create-namespace.sh', {
      ...baseEnv,
      PATH: [cliDir(dir), basePath].filter(Boolean).join(delimiter),
      ...composeServiceEnv('temporal-namespace'),
      TEMPORAL_ADDRESS: address,
    }, join(dir, 'create-namespace.log'));

    return {
      address,
      version: install.version,
      dir,
      postgres,
      pid: (s) => {
        const c = procs.get(s);
        return c && c.exitCode === null && c.signalCode === null ? (c.pid ?? null) : null;
      },
      killService: (s) => halt(s, 'SIGKILL'),
      startService,
      stop: async () => {
        for (const f of stopAll) await f();
      },
    };
  } catch (err) {
    for (const f of stopAll) await f().catch(() => {});
    throw err;
  }
}

/** A free loopback port under `limit` (the kernel's ephemeral range starts above it), not in `taken`. */
async function freePortBelow(limit: number, taken: string[]): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * (limit - 20_000));
    if (!taken.includes(String(port)) && (await isPortFree(port))) return port;
  }
  throw new Error(`no free port between 20000 and ${limit}`);
}

/** A folder holding `temporal` (the CLI the project uses) for scripts that call it by that name; null when PATH has it. */
function cliDir(dir: string): string | null {
  const cli = findTemporalCli();
  if (cli === 'temporal') return null;
  const bin = join(dir, 'cli-bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(cli, join(bin, 'temporal'));
  return bin;
}
