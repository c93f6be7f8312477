// A real webhook receiver in the test process (node:http): what the
// notification tests POST to. Each delivery is recorded as it arrives; how it
// is answered is the test's (a status, a large body, a redirect, or held
// open, never answered, until the test releases it).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  path: string;
  /** Header names lower-case. */
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** Date.now() when the body had arrived. */
  at: number;
  /** The delivery's Idempotency-Key header. */
  key: string;
}

/** How to answer: a status, a status with a body and headers, or `hold` (the response is kept open until released). */
export type Answer = number | { status: number; body?: Buffer | string; headers?: Record<string, string> } | 'hold';

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Deliveries for one run, in arrival order. */
  of(workflowId: string): Delivery[];
  /** Sets how deliveries are answered (default 200): `nth` counts the deliveries of the same Idempotency-Key, from 1. */
  answer(fn: (d: Delivery, nth: number) => Answer): void;
  /** Answers every held delivery with this status. */
  release(status?: number): void;
  /** Held deliveries whose connection is still open. */
  held(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const holding = new Set<ServerResponse>();
  let answerFn: (d: Delivery, nth: number) => Answer = () => 200;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        body = { unparsed: Buffer.concat(chunks).toString('utf8') };
      }
      const key = String(req.headers['idempotency-key'] ?? '');
      const d: Delivery = { path: req.url ?? '/', headers: req.headers, body, at: Date.now(), key };
      deliveries.push(d);
      const nth = deliveries.filter((x) => x.key === key && x.path === d.path).length;
      const a = answerFn(d, nth);
      if (a === 'hold') {
        holding.add(res);
        res.on('close', () => holding.delete(res));
        return;
      }
      const { status, body: out, headers } = typeof a === 'number' ? { status: a, body: undefined, headers: undefined } : a;
      res.writeHead(status, headers);
      res.end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    of: (workflowId) => deliveries.filter((d) => d.body.workflowId === workflowId || (typeof d.body.text === 'string' && d.body.text.includes(workflowId))),
    answer: (fn) => {
      answerFn = fn;
    },
    release: (status = 200) => {
      for (const res of holding) {
        if (!res.writableEnded) {
          res.writeHead(status);
          res.end();
        }
      }
      holding.clear();
    },
    held: () => holding.size,
    close: async () => {
      for (const res of holding) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
