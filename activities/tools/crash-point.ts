// Fault injection for the crash matrix (test/crash-matrix.test.ts): when
// AGENT_CRASH_AT names this point, the worker process dies here with SIGKILL,
// as a power cut would, between two steps no code can make atomic. Unset in
// normal operation, where this is a no-op.
export function crashPoint(name: string): void {
  if (process.env.AGENT_CRASH_AT === name) process.kill(process.pid, 'SIGKILL');
}
