// A payload codec that gzips large payloads: the transcript-carrying ones
// (the continue-as-new input, big query answers, a model call's input when its
// prompt travels whole: older runs, a message-store miss).
// Small payloads — workflow input, results, signals, updates, most queries —
// pass through untouched, so ops read them as plain JSON in the `temporal` CLI
// and the Web UI; `npm run codec-server` lets both show the compressed rest.
// With AGENT_PAYLOAD_KEYS set, every payload is then encrypted (AES-256-GCM):
// compressed first, since ciphertext does not compress. Registered on the
// worker, the client, the CLI, the codec server and the tests, all through
// dataConverter(), so every side reads the same keys.
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { checkPayloadKeys, payloadKeysFromEnv, type PayloadKey } from './payload-keys.js';

export const GZIP_ENCODING = 'binary/gzip';
/** Payloads at or under this size stay plain. */
export const DEFAULT_COMPRESS_ABOVE_BYTES = 32 * 1024;

const PayloadMessage = proto.temporal.api.common.v1.Payload;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class GzipPayloadCodec implements PayloadCodec {
  constructor(private readonly compressAboveBytes = DEFAULT_COMPRESS_ABOVE_BYTES) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      if ((p.data?.length ?? 0) <= this.compressAboveBytes) return p;
      // The whole original payload (metadata and data) is compressed, so
      // decoding restores it exactly.
      const packed = gzipSync(PayloadMessage.encode(p).finish());
      return { metadata: { encoding: encoder.encode(GZIP_ENCODING) }, data: packed };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const encoding = p.metadata?.encoding ? decoder.decode(p.metadata.encoding) : null;
      if (encoding !== GZIP_ENCODING || !p.data) return p;
      return PayloadMessage.decode(gunzipSync(p.data)) as Payload;
    });
  }
}

export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata key naming the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';
export const CIPHER_METADATA = 'encryption-cipher';
const CIPHER = 'AES-256-GCM';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A payload that cannot be decrypted: its key id is not configured, or its tag does not verify. Never decoded as garbage. */
export class PayloadDecryptionError extends Error {
  override readonly name = 'PayloadDecryptionError';
  constructor(
    message: string,
    readonly keyId: string,
  ) {
    super(message);
  }
}

/**
 * AES-256-GCM over the whole payload (metadata and data, as the gzip codec
 * packs it), a fresh 96-bit IV each time. The key id is written in the
 * metadata and bound as associated data, so relabelling a payload with
 * another key id fails its tag like any other tampering.
 */
export class EncryptionPayloadCodec implements PayloadCodec {
  private readonly byId: ReadonlyMap<string, Uint8Array>;
  private readonly current: PayloadKey | null;

  /** With no keys it encrypts nothing, and still refuses an encrypted payload naming its key id (not an "unknown encoding" further on). */
  constructor(keys: readonly PayloadKey[]) {
    checkPayloadKeys(keys);
    this.current = keys[0] ?? null;
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const current = this.current;
    if (!current) return payloads;
    return payloads.map((p) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(encoder.encode(current.id));
      const sealed = Buffer.concat([iv, cipher.update(PayloadMessage.encode(p).finish()), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { encoding: encoder.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: encoder.encode(current.id), [CIPHER_METADATA]: encoder.encode(CIPHER) },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const encoding = p.metadata?.encoding ? decoder.decode(p.metadata.encoding) : null;
      // Payloads written before keys were set stay readable as they are.
      if (encoding !== ENCRYPTED_ENCODING) return p;
      const rawId = p.metadata?.[KEY_ID_METADATA];
      const keyId = rawId ? decoder.decode(rawId) : '';
      const key = this.byId.get(keyId);
      if (!key) {
        const listed = this.byId.size ? `which is not among the configured keys (${[...this.byId.keys()].join(', ')})` : 'and no payload keys are configured';
        throw new PayloadDecryptionError(`payload encrypted with key id ${JSON.stringify(keyId)}, ${listed}: add it to AGENT_PAYLOAD_KEYS`, keyId);
      }
      const data = p.data ?? new Uint8Array();
      const fail = () => new PayloadDecryptionError(`payload encrypted with key id ${JSON.stringify(keyId)} does not verify: tampered, truncated, or another key under that id`, keyId);
      if (data.length < IV_BYTES + TAG_BYTES) throw fail();
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
        decipher.setAAD(encoder.encode(keyId));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        const plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
        return PayloadMessage.decode(plain) as Payload;
      } catch {
        throw fail();
      }
    });
  }
}

export interface DataConverterOptions {
  /**
   * The payload keys as values (first encrypts, all decrypt). Absent: read
   * from AGENT_PAYLOAD_KEYS. null or empty: no encryption, whatever the
   * environment says.
   */
  payloadKeys?: readonly PayloadKey[] | null;
}

/**
 * The codecs every side registers, in encoding order: gzip, then encryption.
 * Without keys the encryption codec passes every payload through as it is,
 * and is there only to refuse an encrypted one by its key id.
 */
export function payloadCodecs(opts: DataConverterOptions = {}): PayloadCodec[] {
  const keys = opts.payloadKeys === undefined ? payloadKeysFromEnv() : opts.payloadKeys;
  return [new GzipPayloadCodec(), new EncryptionPayloadCodec(keys ?? [])];
}

/** The data converter of the worker, the client, the CLI and the tests. Throws PayloadKeysError on a bad AGENT_PAYLOAD_KEYS. */
export function dataConverter(opts: DataConverterOptions = {}): DataConverter {
  return { payloadCodecs: payloadCodecs(opts) };
}
