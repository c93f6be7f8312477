// The ports `npm start` listens on, each with what listens there and the
// variable that moves it, so a busy one is named in one line with its fix.
import { isPortFree } from '../../worker/dev-server/dev-server.js';

export interface PortClaim {
  port: number;
  /** What would listen there, as a person knows it. */
  what: string;
  /** The variable that moves it. */
  env: string;
  /** Set by the person (a busy port is then an error), or a default (busy: go on without it, saying so). */
  chosen: boolean;
}

export function busyLine(c: PortClaim): string {
  return `port ${c.port} (${c.what}) is busy: free it, or set ${c.env} to another port${c.env === 'METRICS_PORT' ? ' (or METRICS_PORT=off)' : ''}`;
}

/** The claims whose port something already listens on. */
export async function busyPorts(claims: readonly PortClaim[]): Promise<PortClaim[]> {
  const busy: PortClaim[] = [];
  for (const c of claims) if (!(await isPortFree(c.port))) busy.push(c);
  return busy;
}

/**
 * A listen error (`listen EADDRINUSE: address already in use 127.0.0.1:18787`)
 * named after the claim on its port; null for any other error. Ports are
 * checked before anything starts, so this is for one taken in between.
 */
export function addressInUseLine(err: unknown, claims: readonly PortClaim[]): string | null {
  const e = err as (NodeJS.ErrnoException & { port?: unknown }) | null;
  if (e?.code !== 'EADDRINUSE') return null;
  const port = typeof e.port === 'number' ? e.port : Number(/:(\d+)\s*$/.exec(e.message)?.[1]);
  const claim = claims.find((c) => c.port === port);
  return claim ? busyLine(claim) : `port ${port} is busy (${e.message})`;
}
