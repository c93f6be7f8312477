// A failure to reach the Temporal server, in the words a person acts on: what
// could not be reached, why in a few words, and what to check. Shared by the
// worker, the CLI and `npm start`.
import { createConnection } from 'node:net';

/** The first line of an error's message. */
export function errorLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0].trim();
}

/** A short reason for a transport failure (the SDK core's or gRPC's words), or null when the text is about something else. */
export function transportFailure(text: string): string | null {
  if (!/Unavailable|tcp connect error|transport error|Connection (refused|reset)|broken pipe|dns error|Failed to connect before the deadline|DeadlineExceeded|deadline exceeded/i.test(text)) return null;
  return unreachableReason(text);
}

/** A short reason for a person, from an SDK or gRPC error text. */
export function unreachableReason(text: string): string {
  if (/Connection refused/i.test(text)) return 'connection refused';
  if (/dns error|Name or service not known|ENOTFOUND/i.test(text)) return 'the host name does not resolve';
  if (/deadline|timed out|timeout/i.test(text)) return 'no answer in time';
  if (/Connection reset|broken pipe|transport error|h2 protocol/i.test(text)) return 'connection dropped';
  return 'unavailable';
}

/**
 * The connection to the server failed. `source`: where the address came from
 * (TEMPORAL_ADDRESS, a profile of the temporal CLI's config file, the dev
 * server's port).
 */
export function cannotReach(address: string, source: string, err: unknown): string {
  const text = errorLine(err);
  const reason = transportFailure(text) ?? text.replace(/^(TransportError|Error): /, '');
  return `cannot reach the Temporal server at ${address} (${source}): ${reason}; check that the server is running and that ${source} names it`;
}

/** Nothing listens at the address: the host itself said so (ECONNREFUSED), as opposed to no answer at all. */
export function connectionRefused(address: string, source: string): string {
  return `no Temporal server answers at ${address} (${source}): connection refused; check that the server is running and that ${source} names it`;
}

/** Thrown by refusedAt when the host refuses the connection. */
export class ConnectionRefused extends Error {}

/** Thrown by refusedAt when the host name does not resolve: said at once, not as a missed deadline 5 s later. */
export class HostNotFound extends Error {}

/** `no such host` in a person's words. */
export function hostNotFound(address: string, source: string): string {
  return `cannot reach the Temporal server at ${address} (${source}): the host name does not resolve; check the host name in ${source}`;
}

/** A server answers at the address, but not as Temporal's frontend (a web server, an HTTP API port, another gRPC service). */
export function notTemporal(address: string, source: string, what: string): string {
  return `the server at ${address} (${source}) is not a Temporal frontend: ${what}; check that ${source} names the Temporal server's gRPC port (7233 by default), not its Web UI or HTTP API port`;
}

/** A gRPC error of a server that is not Temporal's (it lacks the WorkflowService): what it said, or null for any other error. */
export function notTemporalService(err: unknown): string | null {
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (code === 12 && /temporal\.api\.workflowservice/i.test(e.message)) return 'it answers gRPC but does not implement temporal.api.workflowservice.v1.WorkflowService';
  }
  return null;
}

/**
 * What answers at a plaintext address the gRPC client could not connect to:
 * 'http' when it answers an HTTP/1.1 request (a web server, the Web UI, the
 * HTTP API), else null (nothing answers, or something silent). Asked only
 * after the gRPC connect failed, never raced against it: a proxy in front of
 * a real frontend may answer HTTP/1.1 too.
 */
export function answersHttp(address: string, timeoutMs = 2000): Promise<'http' | null> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  const port = Number(address.slice(at + 1));
  return new Promise((resolve) => {
    if (at < 0 || !Number.isInteger(port)) return resolve(null);
    const socket = createConnection({ host, port });
    const done = (v: 'http' | null) => {
      socket.destroy();
      resolve(v);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.once('connect', () => socket.write(`HEAD / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
    socket.once('data', (b: Buffer) => done(b.subarray(0, 7).toString('latin1') === 'HTTP/1.' ? 'http' : null));
    socket.once('error', () => done(null));
    socket.once('close', () => done(null));
  });
}

/**
 * Rejects with ConnectionRefused once a plain TCP connect to the address is
 * refused, and otherwise never settles: raced against the gRPC client's
 * connect, which reports a refused port only as a missed deadline ("Failed to
 * connect before the deadline", 5 s later), it tells the two apart at once.
 */
export function refusedAt(address: string, timeoutMs = 5000): Promise<never> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  const port = Number(address.slice(at + 1));
  return new Promise<never>((_resolve, reject) => {
    if (at < 0 || !Number.isInteger(port)) return;
    const socket = createConnection({ host, port });
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.once('connect', () => socket.destroy());
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') reject(new ConnectionRefused(err.message));
      if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') reject(new HostNotFound(err.message));
    });
  });
}
