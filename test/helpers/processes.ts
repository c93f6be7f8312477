// What is running on this machine, read from /proc: the tests that start and
// stop process trees check by pid that nothing is left behind.
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of live processes whose command line contains every fragment. */
export function processesWith(...fragments: string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmd = commandLine(Number(entry));
    if (cmd && fragments.every((f) => cmd.includes(f)) && isAlive(Number(entry))) pids.push(Number(entry));
  }
  return pids;
}

/** Whether the process exists and is not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name in parentheses: Z is a zombie.
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The parent's pid. */
export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Live processes under `pid` (children, theirs, …), read before it goes: after, they are reparented. */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      parents.set(Number(entry), parentOf(Number(entry)));
    } catch {
      // Gone while listing.
    }
  }
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length > 0; ) {
    const next = [...parents].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found.filter(isAlive);
}
