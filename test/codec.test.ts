// Large payloads travel gzipped; small ones stay plain JSON for ops tools. The
// codec server lets the `temporal` CLI (and the Web UI) show the gzipped ones.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCodecServer } from '../client/codec-server.js';
import { GZIP_ENCODING, GzipPayloadCodec } from '../node/payload-codec.js';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { freshWorkspace, useHarness } from './helpers/harness.js';

const h = useHarness();
const exec = promisify(execFile);
let codecUrl: string;
let closeCodec: () => void;
beforeAll(async () => {
  const { url, server } = await startCodecServer(0);
  codecUrl = url;
  closeCodec = () => server.close();
});
afterAll(() => closeCodec?.());

const show = async (id: string, ...extra: string[]) =>
  (await exec(findTemporalCli(), ['workflow', 'show', '-w', id, '--address', h.address, '--output', 'json', ...extra], { maxBuffer: 64 * 1024 * 1024 })).stdout;

interface ShownPayload {
  encoding: string;
  text: string;
}

/** Every payload in `temporal workflow show --output json`, with its encoding and data decoded from base64. */
function payloads(node: unknown, out: ShownPayload[] = []): ShownPayload[] {
  if (Array.isArray(node)) for (const x of node) payloads(x, out);
  else if (node && typeof node === 'object') {
    const o = node as { metadata?: { encoding?: string }; data?: string };
    if (o.metadata?.encoding && typeof o.data === 'string') {
      out.push({ encoding: Buffer.from(o.metadata.encoding, 'base64').toString(), text: Buffer.from(o.data, 'base64').toString() });
    }
    for (const v of Object.values(node)) payloads(v, out);
  }
  return out;
}

describe('payload codec', () => {
  it('round-trips a large payload and leaves a small one untouched', async () => {
    const codec = new GzipPayloadCodec(100);
    const small = { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode('{"a":1}') };
    const large = { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify({ text: 'x'.repeat(5000) })) };
    const [s, l] = await codec.encode([small, large]);
    expect(s).toBe(small);
    expect(new TextDecoder().decode(l.metadata?.encoding ?? undefined)).toBe(GZIP_ENCODING);
    expect(l.data!.length).toBeLessThan(200);
    const [back] = await codec.decode([l]);
    expect(new TextDecoder().decode(back.data ?? undefined)).toBe(new TextDecoder().decode(large.data));
  });

  it('in a real run: input and result stay plain JSON, the transcript-carrying payloads are gzipped, and --codec-endpoint shows them', async () => {
    const ws = freshWorkspace();
    const dir = join(h.workspaceRoot, ws);
    mkdirSync(dir, { recursive: true });
    // Twenty pages of ~4 KB, and a continue-as-new after ~10 turns: the state it
    // carries (the transcript) is well over 32 KiB. (Model calls send the prompt by
    // address, so their inputs stay small.)
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `page${i}.txt`), `page ${i} `.repeat(500));
    for (const f of ['errors.log', 'access.log', 'notes.txt']) writeFileSync(join(dir, f), '');
    const handle = await h.start({ task: 'Read every page.', model: 'bulky', workspace: ws, limits: { maxTurns: 12, maxBudgetUsd: null }, continueAsNewAtHistoryBytes: 50_000 });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 12 });

    const raw = payloads(JSON.parse(await show(handle.workflowId)));
    const gz = raw.filter((p) => p.encoding === GZIP_ENCODING);
    expect(gz.length).toBeGreaterThan(0);
    // Plain for ops: every payload that is not gzipped is JSON as it stands,
    // the input and the result among them.
    const plain = raw.filter((p) => p.encoding !== GZIP_ENCODING);
    expect(plain.every((p) => p.encoding === 'json/plain')).toBe(true);
    expect(plain.some((p) => p.text.includes('Read every page.'))).toBe(true);
    expect(plain.some((p) => p.text.includes('"status":"max_turns_exceeded"'))).toBe(true);

    // Through the codec server, nothing is left gzipped and the pages are readable.
    const decoded = payloads(JSON.parse(await show(handle.workflowId, '--codec-endpoint', codecUrl)));
    expect(decoded.filter((p) => p.encoding === GZIP_ENCODING)).toHaveLength(0);
    expect(decoded.some((p) => p.text.includes('page 11 page 11'))).toBe(true);
  });
});
