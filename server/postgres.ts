// A throwaway PostgreSQL instance of the machine's own binaries (Debian's
// postgresql package; scripts/install-cluster-server.mjs installs it where it
// is missing): its own data folder, a free loopback port, the user and
// password the compose file gives the postgres image, and password
// authentication over TCP as that image has. The postmaster is our child
// process (no pg_ctl daemon), so whoever started it can crash it, restart it,
// and never leave it behind. PostgreSQL refuses to run as root: as root, it
// runs as the `postgres` user the Debian package creates.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { waitForPort } from './wait-for-port';

export interface PostgresOptions {
  /** Folder holding initdb, postgres (default: found on PATH, then /usr/lib/postgresql/N/bin). */
  binDir?: string;
  port: number;
  user: string;
  password: string;
  /** Four Temporal service processes each open their own pools: more than the default 100. */
  maxConnections?: number;
  /** Parent of the data folder (default: the system temp folder). */
  parentDir?: string;
}

export interface Postgres {
  port: number;
  dataDir: string;
  /** Stops as a crash would (SIGQUIT: no checkpoint, recovery at the next start), then starts again on the same data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The folder of the machine's initdb and postgres, or null. */
export function findPostgresBin(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  // /usr/local/bin/initdb is often a link into the versioned folder; postgres sits beside it either way.
  if (onPath && existsSync(join(onPath, '..', 'postgres'))) return join(onPath, '..');
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  const found = versions.map((v) => join(root, v, 'bin')).find((d) => existsSync(join(d, 'initdb')));
  return found ?? null;
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
  const bin = opts.binDir ?? findPostgresBin();
  if (!bin) throw new Error('PostgreSQL not found: run `npm run cluster:install` (it installs Debian\'s postgresql as root), or put initdb and postgres on PATH');
  const home = mkdtempSync(join(opts.parentDir ?? tmpdir(), 'agent-harness-pg-'));
  const dataDir = join(home, 'data');
  const log = join(home, 'postgres.log');
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
    restart: async () => {
      await halt('SIGQUIT');
      await start();
    },
    stop: async () => {
      await halt('SIGINT');
      rmSync(home, { recursive: true, force: true });
    },
  };
}
