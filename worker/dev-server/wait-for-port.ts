// Waits until something accepts TCP connections on a loopback port: how the
// processes the cluster starts (PostgreSQL, each Temporal service) say they
// are up, as the compose file's health checks (`nc -z`, pg_isready) do.
import { connect } from 'node:net';

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => (s.destroy(), resolve(false)));
  });
}

/**
 * Polls `port` until it accepts, failing at once with `died()`'s message when
 * that says the process behind it is gone, or after `timeoutMs`.
 */
export async function waitForPort(port: number, timeoutMs: number, died: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = died();
    if (dead) throw new Error(dead);
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
