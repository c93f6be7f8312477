// The codec server decrypts for whoever reaches it, so it refuses: a request
// without the token or with a wrong one, a browser from an origin not listed,
// a body over the cap, a payload that does not verify. Each with its reason;
// and the server goes on serving the callers it should.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codecServerOptionsFromEnv, startCodecServer } from '../../client/codec-server.js';
import { EncryptionPayloadCodec } from '../../node/payload-codec.js';
import type { PayloadKey } from '../../node/payload-keys.js';

const UI = 'http://127.0.0.1:8233';
const TOKEN = randomBytes(24).toString('base64url');
const KEY: PayloadKey = { id: 'k1', key: new Uint8Array(randomBytes(32)) };
const CAP = 64 * 1024;
let url: string;
let server: Server;

beforeAll(async () => {
  ({ url, server } = await startCodecServer(0, '127.0.0.1', { allowOrigins: [UI], token: TOKEN, payloadKeys: [KEY], maxBodyBytes: CAP }));
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');
async function sealed(text: string) {
  const [p] = await new EncryptionPayloadCodec([KEY]).encode([{ metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify(text)) }]);
  return { metadata: Object.fromEntries(Object.entries(p.metadata!).map(([k, v]) => [k, b64(v)])), data: b64(p.data!) };
}
const decode = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const auth = { authorization: `Bearer ${TOKEN}` };

describe('the codec server refuses', () => {
  it('decodes for a caller with the token (the temporal CLI: --codec-auth "Bearer …", no Origin)', async () => {
    const res = await decode({ payloads: [await sealed('the task')] }, auth);
    expect(res.status).toBe(200);
    const { payloads } = (await res.json()) as { payloads: { data: string }[] };
    expect(Buffer.from(payloads[0].data, 'base64').toString()).toBe('"the task"');
  });

  it('a request without the token, or with a wrong one', async () => {
    const body = { payloads: [await sealed('the task')] };
    const none = await decode(body);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'missing bearer token: this codec server requires Authorization: Bearer <AGENT_CODEC_TOKEN>' });
    const wrong = await decode(body, { authorization: `Bearer ${TOKEN}x` });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: 'wrong bearer token' });
    const basic = await decode(body, { authorization: `Basic ${b64(`u:${TOKEN}`)}` });
    expect(basic.status).toBe(401);
  });

  it("a browser from an origin not listed, preflight and request alike; the listed origin's preflight passes without the token", async () => {
    const pre = await fetch(`${url}/decode`, { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const post = await decode({ payloads: [await sealed('x')] }, { ...auth, origin: 'http://evil.example' });
    expect(post.status).toBe(403);
    expect(await post.json()).toEqual({ error: 'origin http://evil.example is not allowed: list it in CODEC_ALLOW_ORIGIN' });
    // Another port of the same host is another origin.
    expect((await decode({ payloads: [] }, { ...auth, origin: 'http://127.0.0.1:9999' })).status).toBe(403);
    const ok = await fetch(`${url}/decode`, { method: 'OPTIONS', headers: { origin: UI, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-namespace' } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(UI);
    expect(ok.headers.get('access-control-allow-headers')).toContain('authorization');
    const fromUi = await decode({ payloads: [await sealed('y')] }, { ...auth, origin: UI });
    expect(fromUi.status).toBe(200);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(UI);
  });

  it('a body over the cap, declared or streamed without a length; the server serves the next request', async () => {
    const big = JSON.stringify({ payloads: [{ metadata: {}, data: 'A'.repeat(CAP) }] });
    const declared = await decode(JSON.parse(big), auth);
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: string }).error).toBe(`request body of ${big.length} bytes is over the ${CAP}-byte cap`);
    // Chunked, no content-length: cut off once past the cap, not read to its end.
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${url}/decode`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      for (let i = 0; i < 8; i++) req.write('A'.repeat(16 * 1024));
      req.end();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toEqual({ error: `request body is over the ${CAP}-byte cap` });
    expect((await decode({ payloads: [await sealed('after')] }, auth)).status).toBe(200);
  });

  it('a tampered payload, naming its key id, never garbage', async () => {
    const p = await sealed('pay alice 10');
    const bytes = Buffer.from(p.data, 'base64');
    bytes[bytes.length - 1] ^= 1;
    const res = await decode({ payloads: [{ ...p, data: bytes.toString('base64') }] }, auth);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('payload encrypted with key id "k1" does not verify: tampered, truncated, or another key under that id');
  });

  it('reads its settings from the environment: the UI origins by default, a bad cap refused naming it', () => {
    expect(codecServerOptionsFromEnv(8233, {})).toEqual({ allowOrigins: ['http://127.0.0.1:8233', 'http://localhost:8233'], token: null });
    expect(codecServerOptionsFromEnv(8233, { CODEC_ALLOW_ORIGIN: 'http://localhost:8080', AGENT_CODEC_TOKEN: 't', CODEC_MAX_BODY_BYTES: '1024' })).toEqual({ allowOrigins: 'http://localhost:8080', token: 't', maxBodyBytes: 1024 });
    expect(() => codecServerOptionsFromEnv(8233, { CODEC_MAX_BODY_BYTES: '1e3x' })).toThrow('CODEC_MAX_BODY_BYTES must be a positive integer, got "1e3x"');
  });
});
