// A throwaway PostgreSQL instance of the machine's own binaries (Debian's
// postgresql package; scripts/install-cluster-server.mjs installs it where it
// is missing): its own data folder, a free loopback port, the user and
// password the compose file gives the postgres image, and password
// authentication over TCP as that image has. The postmaster is our child
// process (no pg_ctl daemon), so whoever started it can crash it, restart it,
// and never leave it behind. PostgreSQL refuses to run as root: as root, it
// runs as the `postgres` user the Debian package creates.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { waitForPort } from '../../worker/dev-server/wait-for-port.js';

export interface PostgresOptions {
  /** Folder holding initdb and postgres (scripts/install-cluster-server.mjs finds or installs them). */
  binDir: string;
  port: number;
  user: string;
  password: string;
  /** Four Temporal service processes each open their own pools: more than the default 100. */
  maxConnections?: number;
  /** Where the data folder is made (default: the system temp folder); the data folder goes at stop. */
  parentDir?: string;
  /** Where the server's output goes (default: beside the data folder, removed with it). */
  logFile?: string;
}

export interface Postgres {
  port: number;
  dataDir: string;
  /** Stops as a crash would (SIGQUIT: no checkpoint, recovery at the next start). */
  crash(): Promise<void>;
  /** Starts again on the same data (after crash()); returns once it accepts connections. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs `argv` as the postgres user when we are root (setpriv execs in place: the pid stays the program's). */
function asPostgresUser(argv: string[]): string[] {
  if (process.getuid?.() !== 0) return argv;
  const pg = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  if (pg.status !== 0) throw new Error('PostgreSQL refuses to run as root and there is no `postgres` user: install Debian\'s postgresql package or run as another user');
  return ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--', ...argv];
}

function ownedByPostgres(path: string): void {
  if (process.getuid?.() !== 0) return;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout);
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout);
  chownSync(path, uid, gid);
}

export async function startPostgres(opts: PostgresOptions): Promise<Postgres> {
  const bin = opts.binDir;
  const home = mkdtempSync(join(opts.parentDir ?? tmpdir(), 'agent-harness-pg-'));
  const dataDir = join(home, 'data');
  const log = opts.logFile ?? join(home, 'postgres.log');
  const pwfile = join(home, 'pwfile');
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(pwfile, opts.password + '\n', { mode: 0o600 });
  for (const p of [home, dataDir, pwfile]) ownedByPostgres(p);

  const [cmd, ...rest] = asPostgresUser([join(bin, 'initdb'), '-D', dataDir, '-U', opts.user, `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--no-locale']);
  const init = spawnSync(cmd, rest, { cwd: home, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed for ${dataDir} as ${process.getuid?.() === 0 ? 'postgres' : userInfo().username}:\n${init.stderr}`);
  rmSync(pwfile);

  const args = [
    join(bin, 'postgres'), '-D', dataDir, '-p', String(opts.port), '-h', '127.0.0.1',
    // The socket lives in the data folder: /var/run/postgresql may not exist or be writable.
    '-k', dataDir, '-c', `max_connections=${opts.maxConnections ?? 200}`,
  ];
  let child: ChildProcess | null = null;
  const start = async () => {
    const out = openSync(log, 'a');
    const [pgCmd, ...pgArgs] = asPostgresUser(args);
    const c = spawn(pgCmd, pgArgs, { cwd: home, stdio: ['ignore', out, out] });
    child = c;
    let exited: string | null = null;
    c.once('exit', (code, sig) => (exited = `exited with ${code ?? sig}`));
    await waitForPort(opts.port, 60_000, () => (exited ? `postgres ${exited}; see ${log}` : null));
  };
  /** Sends `signal` (SIGINT: fast shutdown; SIGQUIT: immediate, as a crash) and waits for the exit. */
  const halt = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill(signal);
      setTimeout(() => c.kill('SIGKILL'), 15_000).unref();
    });

  await start();
  return {
    port: opts.port,
    dataDir,
    crash: () => halt('SIGQUIT'),
    start,
    stop: async () => {
      await halt('SIGINT');
      rmSync(home, { recursive: true, force: true });
    },
  };
}
