// Which `npm start` started the dev server on a port. The next `npm start`
// reads it to tell apart a server it may share (another `npm start` still
// running, or a server someone started by hand) from one an `npm start` left
// behind when it was killed outright (SIGKILL: no chance to stop its
// children), which it stops and replaces rather than adopt silently.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

interface ServerRecord {
  /** The `temporal server start-dev` process. */
  pid: number;
  /** The `npm start` that started it, and its command line (a reused pid is not the owner). */
  ownerPid: number;
  ownerCommand: string;
}

export type ServerOnPort =
  | { kind: 'unrecorded' }
  | { kind: 'shared'; ownerPid: number }
  | { kind: 'leftover'; pid: number };

/** Beside the server's SQLite file, one per port. */
export function recordFile(dbFile: string, port: number): string {
  return join(dirname(dbFile), `temporal-server-${port}.json`);
}

export function recordServer(file: string, pid: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const rec: ServerRecord = { pid, ownerPid: process.pid, ownerCommand: commandLine(process.pid) };
  writeFileSync(file, JSON.stringify(rec));
}

export function forgetServer(file: string): void {
  rmSync(file, { force: true });
}

/** What the record says about the server on the port; a record of a server that is gone is removed. */
export function serverOnPort(file: string, port: number): ServerOnPort {
  let rec: ServerRecord;
  try {
    rec = JSON.parse(readFileSync(file, 'utf8')) as ServerRecord;
  } catch {
    return { kind: 'unrecorded' };
  }
  const serverCommand = commandLine(rec.pid);
  // Its pid now names another process (or none): the record is stale.
  if (!isAlive(rec.pid) || (existsSync('/proc') && !(serverCommand.includes('start-dev') && serverCommand.includes(`--port ${port}`)))) {
    forgetServer(file);
    return { kind: 'unrecorded' };
  }
  const ownerAlive = isAlive(rec.ownerPid) && commandLine(rec.ownerPid) === rec.ownerCommand;
  return ownerAlive ? { kind: 'shared', ownerPid: rec.ownerPid } : { kind: 'leftover', pid: rec.pid };
}

/** Stops a leftover server: SIGTERM, then SIGKILL if it has not gone within 10 s. */
export async function stopLeftover(pid: number): Promise<void> {
  signal(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      signal(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Gone already.
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A process's command line, where /proc has it (Linux); '' elsewhere. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}
