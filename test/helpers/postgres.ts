// A PostgreSQL of the test's own: initdb in a temp folder, the server on a
// free port, stopped (and its folder removed) at the end. Never a running
// instance of the machine. PostgreSQL refuses to run as root: as root, the
// cluster belongs to the `postgres` system user (Debian's package makes it)
// and the server runs as that user (setpriv execs it directly, so the process
// the test holds is the server itself and a signal reaches it).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { findFreePort } from '../../worker/dev-server/dev-server.js';

export interface TestPostgres {
  /** postgres://agent@127.0.0.1:PORT/<database> for a database of this name (created on first use by the ledger). */
  url(database: string): string;
  port: number;
  stop(): Promise<void>;
}

const BIN_DIRS = ['/usr/lib/postgresql/15/bin', '/usr/local/bin', '/usr/bin'];

function bin(name: string): string {
  for (const d of BIN_DIRS) if (existsSync(join(d, name))) return join(d, name);
  throw new Error(`PostgreSQL's ${name} is not installed (looked in ${BIN_DIRS.join(', ')}): install Debian's postgresql package`);
}

/** As root: run as the postgres user (uid/gid from the system's passwd). */
function asUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' }).trim();
  const [, , uid, gid] = line.split(':');
  if (!uid || !gid) throw new Error('running as root, and there is no postgres user to run PostgreSQL as');
  return { uid: Number(uid), gid: Number(gid) };
}

function command(user: { uid: number; gid: number } | null, file: string, args: string[]): [string, string[]] {
  return user ? ['setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', file, ...args]] : [file, args];
}

export async function startPostgres(): Promise<TestPostgres> {
  const user = asUser();
  const dir = mkdtempSync(join(tmpdir(), 'agent-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const [initCmd, initArgs] = command(user, bin('initdb'), ['-D', data, '-U', 'agent', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  const port = await findFreePort();
  let server: ChildProcess;
  let output = '';

  const start = async () => {
    const [cmd, args] = command(user, bin('postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200']);
    server = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (b: Buffer) => (output += b.toString()));
    server.stderr?.on('data', (b: Buffer) => (output += b.toString()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`postgres exited (${server.exitCode}):\n${output}`);
      const c = new pg.Client({ connectionString: `postgres://agent@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 2000 });
      try {
        await c.connect();
        await c.end();
        return;
      } catch {
        await c.end().catch(() => {});
      }
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections on port ${port} within 60 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const kill = async (signal: NodeJS.Signals) => {
    if (server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise<void>((r) => server.once('exit', () => r()));
    server.kill(signal);
    await exited;
  };

  await start();
  return {
    port,
    url: (database) => `postgres://agent@127.0.0.1:${port}/${database}`,
    stop: async () => {
      // SIGINT: PostgreSQL's fast shutdown (clients are disconnected).
      await kill('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
