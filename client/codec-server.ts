// `npm run codec-server`: the remote codec endpoint the Temporal Web UI
// (`--ui-codec-endpoint`, or its settings) and the `temporal` CLI
// (`--codec-endpoint`) call to show compressed payloads as plain JSON.
// Protocol: POST /decode or /encode with {"payloads":[{"metadata":{k:b64},"data":b64}]}.
import type { Payload } from '@temporalio/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GzipPayloadCodec } from '../common/payload-codec.js';

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: p.data === undefined ? undefined : Buffer.from(p.data, 'base64'),
});
const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: p.data ? Buffer.from(p.data).toString('base64') : undefined,
});

export async function startCodecServer(port: number, host = '127.0.0.1', allowOrigin = '*'): Promise<{ url: string; server: Server }> {
  const codec = new GzipPayloadCodec();
  const server = createServer((req, res) => {
    // Browsers refuse `*` together with credentials (the Web UI sends them):
    // answer with the caller's own origin when it is allowed.
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;
    const allowed = allowOrigin === '*' ? origin : allowOrigin.split(',').map((o) => o.trim()).find((o) => o === origin) ?? null;
    const cors: Record<string, string> = {
      ...(allowed ? { 'access-control-allow-origin': allowed, 'access-control-allow-credentials': 'true', vary: 'Origin' } : allowOrigin === '*' ? { 'access-control-allow-origin': '*' } : {}),
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'content-type, x-namespace, authorization',
    };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors).end();
      return;
    }
    const route = req.url?.split('?')[0];
    if (req.method !== 'POST' || (route !== '/decode' && route !== '/encode')) {
      res.writeHead(404, cors).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payloads?: JsonPayload[] };
          const payloads = (body.payloads ?? []).map(fromJson);
          const out = route === '/decode' ? await codec.decode(payloads) : await codec.encode(payloads);
          res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({ payloads: out.map(toJson) }));
        } catch (err) {
          res.writeHead(400, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
        }
      })();
    });
  });
  // A port in use is an answer (the caller may reuse the server already there), not a crash.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, server };
}
