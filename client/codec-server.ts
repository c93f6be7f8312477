// `npm run codec-server`: the remote codec endpoint the Temporal Web UI
// (`--ui-codec-endpoint`, or its settings) and the `temporal` CLI
// (`--codec-endpoint`) call to show compressed and encrypted payloads as plain JSON.
// Protocol: POST /decode or /encode with {"payloads":[{"metadata":{k:b64},"data":b64}]}.
// Whoever can call /decode reads every payload in clear, so: a bearer token
// when AGENT_CODEC_TOKEN is set, browsers only from the listed origins, a
// cap on what one request may make the server buffer, and a cap on what its
// payloads may unpack to (MAX_UNPACKED_PAYLOAD_BYTES each,
// MAX_UNPACKED_BYTES_PER_CALL a request: node/payload-codec.ts), which the
// body cap alone did not bound (a 531 KB body unpacked to 400 MiB).
import type { Payload, PayloadCodec } from '@temporalio/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerCheck } from '../node/bearer-token.js';
import { payloadCodecs, UndecodablePayloadError } from '../node/payload-codec.js';
import type { PayloadKey } from '../node/payload-keys.js';

/**
 * 8 MiB: Temporal refuses any payload over 2 MiB, and a request carries the
 * payloads of one event or one query answer (~2.7 MiB for a payload at the
 * limit once base64'd, a few of them at most). Far above what the UI and the
 * CLI send, far below what would let one caller make the server hold memory
 * without end.
 */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/** How the codec server runs (startCodecServer): who may call it, with which keys, and how large a body it reads. */
export interface CodecServerOptions {
  /** Origins a browser may call from (exact `scheme://host:port`), or `*` for any. Default: the Web UI the project starts (defaultUiOrigins). */
  allowOrigins?: string | readonly string[];
  /** The bearer token every POST must carry; null or empty: none asked. */
  token?: string | null;
  /** Payload keys as values; absent: AGENT_PAYLOAD_KEYS. */
  payloadKeys?: readonly PayloadKey[] | null;
  /** The largest request body read, in bytes; a larger one is answered 413. Default: DEFAULT_MAX_BODY_BYTES (8 MiB). */
  maxBodyBytes?: number;
}

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

/** The origins as a list; a comma-separated string is split (CODEC_ALLOW_ORIGIN's form). */
export function originList(origins: string | readonly string[] | undefined): string[] {
  const list = typeof origins === 'string' ? origins.split(',') : [...(origins ?? [])];
  return list.map((o) => o.trim().replace(/\/+$/, '')).filter((o) => o !== '');
}

/** The Web UI `npm start` runs (TEMPORAL_UI_PORT, default 8233), by both names a browser may use for it. */
export function defaultUiOrigins(uiPort = 8233): string[] {
  return [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`];
}

/** The codec server's settings from the environment: CODEC_ALLOW_ORIGIN, AGENT_CODEC_TOKEN, CODEC_MAX_BODY_BYTES. */
export function codecServerOptionsFromEnv(uiPort: number, env: NodeJS.ProcessEnv = process.env): CodecServerOptions {
  const cap = env.CODEC_MAX_BODY_BYTES?.trim();
  if (cap && !(Number.isInteger(Number(cap)) && Number(cap) > 0)) throw new Error(`CODEC_MAX_BODY_BYTES must be a positive integer, got ${JSON.stringify(cap)}`);
  return {
    allowOrigins: env.CODEC_ALLOW_ORIGIN?.trim() || defaultUiOrigins(uiPort),
    token: env.AGENT_CODEC_TOKEN?.trim() || null,
    ...(cap ? { maxBodyBytes: Number(cap) } : {}),
  };
}

/** `allowOrigin` as a string: the comma-separated origins (the form of CODEC_ALLOW_ORIGIN), kept for older callers. */
export async function startCodecServer(port: number, host = '127.0.0.1', options: CodecServerOptions | string = {}): Promise<{ url: string; server: Server }> {
  const opts: CodecServerOptions = typeof options === 'string' ? { allowOrigins: options } : options;
  const origins = opts.allowOrigins === undefined ? defaultUiOrigins() : originList(opts.allowOrigins);
  const anyOrigin = origins.includes('*');
  const tokenCheck = opts.token ? bearerCheck(opts.token) : null;
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // The same codecs, in the same order, as every other side (keys read once, here).
  const codecs: PayloadCodec[] = payloadCodecs(opts.payloadKeys === undefined ? {} : { payloadKeys: opts.payloadKeys });
  const decodeAll = async (ps: Payload[]) => codecs.reduceRight(async (acc, c) => c.decode(await acc), Promise.resolve(ps));
  const encodeAll = async (ps: Payload[]) => codecs.reduce(async (acc, c) => c.encode(await acc), Promise.resolve(ps));

  const server = createServer((req, res) => {
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;
    // A browser always says where it calls from; other callers (the temporal CLI, scripts) send no Origin and are held by the token.
    const originAllowed = origin === null || anyOrigin || origins.includes(origin);
    // Browsers refuse `*` together with credentials (the Web UI may send them): answer with the caller's own origin.
    const cors: Record<string, string> =
      origin !== null && originAllowed
        ? {
            'access-control-allow-origin': origin,
            'access-control-allow-credentials': 'true',
            'access-control-allow-methods': 'POST, OPTIONS',
            'access-control-allow-headers': 'content-type, x-namespace, authorization',
            vary: 'Origin',
          }
        : { vary: 'Origin' };
    const refuse = (status: number, error: string) => {
      res.writeHead(status, { ...cors, 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ error }));
    };
    if (!originAllowed) {
      refuse(403, `origin ${origin} is not allowed: list it in CODEC_ALLOW_ORIGIN`);
      req.resume();
      return;
    }
    // A preflight carries no credentials (browsers never send them there): answered on the origin alone.
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors).end();
      return;
    }
    const route = req.url?.split('?')[0];
    if (req.method !== 'POST' || (route !== '/decode' && route !== '/encode')) {
      res.writeHead(404, cors).end();
      req.resume();
      return;
    }
    if (tokenCheck) {
      const problem = tokenCheck(req.headers.authorization);
      if (problem === 'missing') {
        refuse(401, 'missing bearer token: this codec server requires Authorization: Bearer <AGENT_CODEC_TOKEN>');
        req.resume();
        return;
      }
      if (problem === 'wrong') {
        refuse(401, 'wrong bearer token');
        req.resume();
        return;
      }
    }
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > maxBody) {
      refuse(413, `request body of ${declared} bytes is over the ${maxBody}-byte cap`);
      req.destroy();
      return;
    }
    readBody(req, res, maxBody, refuse, async (body) => {
      const payloads = requestPayloads(body);
      if (typeof payloads === 'string') {
        refuse(400, payloads);
        return;
      }
      let out: Payload[];
      try {
        // Each payload unpacks to at most MAX_UNPACKED_PAYLOAD_BYTES, the request to MAX_UNPACKED_BYTES_PER_CALL (node/payload-codec.ts).
        out = route === '/decode' ? await decodeAll(payloads) : await encodeAll(payloads);
      } catch (err) {
        // Our own errors name what is wrong; anything else would print this process's internals to a caller.
        refuse(400, err instanceof UndecodablePayloadError ? err.message : `the payloads could not be ${route === '/decode' ? 'decoded' : 'encoded'}`);
        return;
      }
      res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({ payloads: out.map(toJson) }));
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

const PROTOCOL = 'send {"payloads": [{"metadata": {"encoding": "<base64>"}, "data": "<base64>"}]}';
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request's payloads, or one line naming what is wrong with it (a field by its path, never a parser's internals). */
export function requestPayloads(body: Buffer): Payload[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return `request body is not JSON: ${PROTOCOL}`;
  }
  if (!isRecord(parsed) || !Array.isArray(parsed.payloads)) return `request body must be an object with a "payloads" array: ${PROTOCOL}`;
  const out: Payload[] = [];
  for (const [i, p] of parsed.payloads.entries()) {
    const at = `payloads[${i}]`;
    if (!isRecord(p)) return `${at} must be an object with "metadata" and "data"`;
    if (p.metadata !== undefined && !isRecord(p.metadata)) return `${at}.metadata must be an object of base64 strings`;
    for (const [k, v] of Object.entries(p.metadata ?? {})) {
      if (typeof v !== 'string') return `${at}.metadata.${k.slice(0, 64)} must be a base64 string`;
    }
    if (p.data !== undefined && typeof p.data !== 'string') return `${at}.data must be a base64 string`;
    out.push(fromJson({ metadata: (p.metadata ?? {}) as Record<string, string>, ...(p.data === undefined ? {} : { data: p.data }) }));
  }
  return out;
}

/** Reads the body up to the cap; past it (a chunked body that declared no length), refuses and stops reading. */
function readBody(req: IncomingMessage, _res: ServerResponse, maxBody: number, refuse: (status: number, error: string) => void, then: (body: Buffer) => Promise<void>): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > maxBody) {
      over = true;
      refuse(413, `request body is over the ${maxBody}-byte cap`);
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    if (!over) void then(Buffer.concat(chunks));
  });
}
