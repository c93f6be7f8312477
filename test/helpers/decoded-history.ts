// A history as a person would read it with the codec server: every payload
// run back through the project's codecs (node/payload-codec.ts: large ones
// are gzipped; with AGENT_PAYLOAD_KEYS, all are encrypted) and shown as text. Searching the raw history instead finds
// nothing inside a payload: its bytes serialize as numbers, or base64 in a
// saved JSON history, and compressed payloads hide even that.
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type proto from '@temporalio/proto';
import { payloadCodecs } from '../../node/payload-codec.js';

type History = proto.temporal.api.history.v1.IHistory;

const codecs = payloadCodecs();
const codec = { decode: (ps: Payload[]) => codecs.reduceRight(async (acc, c) => c.decode(await acc), Promise.resolve(ps)) };
const utf8 = new TextDecoder();

const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;
const isPayload = (v: unknown): v is Payload => typeof v === 'object' && v !== null && isBytes((v as Payload).data) && !Array.isArray(v);

/** The values these payloads hold, decoded by the codec and the default converter (the SDK's JSON). */
export async function decodePayloads(payloads: readonly Payload[] | null | undefined): Promise<unknown[]> {
  const decoded = await codec.decode([...(payloads ?? [])]);
  return decoded.map((p) => defaultPayloadConverter.fromPayload(p));
}

/** One payload as text: its metadata and its decoded bytes. */
async function payloadText(p: Payload): Promise<{ metadata: Record<string, string>; data: string }> {
  const [plain] = await codec.decode([p]);
  const metadata = Object.fromEntries(Object.entries(plain.metadata ?? {}).map(([k, v]) => [k, utf8.decode(v)]));
  return { metadata, data: plain.data ? utf8.decode(plain.data) : '' };
}

async function readable(v: unknown): Promise<unknown> {
  if (isPayload(v)) return payloadText(v);
  if (isBytes(v)) return utf8.decode(v);
  if (Array.isArray(v)) return Promise.all(v.map(readable));
  if (typeof v === 'object' && v !== null) {
    // Own fields only: a message's toJSON would print bytes as base64 again.
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = await readable(x);
    return out;
  }
  return v;
}

/** The whole history as searchable text, every payload decoded. */
export async function decodedHistoryText(history: History): Promise<string> {
  return JSON.stringify(await readable(history));
}

/**
 * Whether a secret appears in the text as is or as it would be escaped inside
 * a JSON string (a decoded payload is JSON).
 */
export function mentions(text: string, secret: string): boolean {
  return text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1));
}
