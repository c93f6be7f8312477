// CPU time a process has used so far, from /proc/<pid>/stat (Linux): what a
// benchmark reads before and after a batch of runs to say what each run cost
// the process — the dev server above all, whose CPU bounds throughput here.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | null = null;

/** The kernel's clock ticks per second (`getconf CLK_TCK`, 100 on Linux as a rule). */
function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  return ticksPerSecond;
}

/**
 * utime + stime of process `pid`, ms (all its threads; not its children).
 * The command name (field 2) may hold spaces and parentheses, so the fields
 * are counted from after its closing parenthesis: utime and stime are fields
 * 14 and 15 of the line, the 12th and 13th after it.
 */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`/proc/${pid}/stat: no utime/stime in ${JSON.stringify(stat.slice(0, 120))}`);
  return ((utime + stime) * 1000) / clockTicks();
}

/**
 * Waits until process `pid` is idle — under `idleShare` of one core over a
 * `windowMs` window — or `maxMs` passed, so work the server does after a
 * batch's last result (closing tasks, visibility writes) is counted with it.
 */
export async function settledCpuMs(pid: number, windowMs = 1000, idleShare = 0.05, maxMs = 15_000): Promise<number> {
  const deadline = Date.now() + maxMs;
  let last = processCpuMs(pid);
  for (;;) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = processCpuMs(pid);
    if (now - last <= windowMs * idleShare || Date.now() > deadline) return now;
    last = now;
  }
}
