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
import type { DataConverter, Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import proto from '@temporalio/proto';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { checkPayloadKeys, payloadKeysFromEnv, type PayloadKey } from './payload-keys.js';
import { undecodableMarker } from '../common/undecodable.js';

export const GZIP_ENCODING = 'binary/gzip';
/** Payloads at or under this size stay plain. */
export const DEFAULT_COMPRESS_ABOVE_BYTES = 32 * 1024;
/**
 * 8 MiB: the most one payload may unpack to. Temporal refuses payloads over
 * 2 MiB as stored (compressed), and the harness keeps what it writes under
 * 2 MiB counted before compression (MAX_TRANSCRIPT_CHARS, the tool result
 * cap), so nothing the harness writes comes near it; a decompression bomb
 * (a few KB of gzip that unpack to gigabytes) stops here, before the bytes
 * are held. docs/security.md says it.
 */
export const MAX_UNPACKED_PAYLOAD_BYTES = 8 * 1024 * 1024;
/**
 * What one decode call (one signal's or query's arguments, one codec-server
 * request) may unpack to in all: many small bombs in one call add up too.
 */
export const MAX_UNPACKED_BYTES_PER_CALL = 4 * MAX_UNPACKED_PAYLOAD_BYTES;

const PayloadMessage = proto.temporal.api.common.v1.Payload;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A payload this side cannot decode: not the gzip it says, over the unpack cap, not a Payload inside, an unknown key. The message names which. */
export class UndecodablePayloadError extends Error {
  override readonly name: string = 'UndecodablePayloadError';
}

/**
 * What a decoder does with a payload it cannot decode. `throw` (the client,
 * the CLI, the codec server): a clear error to whoever asked. `refuse` (the
 * worker): a payload of a workflow (a signal, an update, a query, a start or
 * continue-as-new input, a child's result) becomes a small JSON marker,
 * `{"__undecodable": "<why>"}`, that the run's handlers refuse to the sender
 * (common/undecodable.ts); thrown there, it would fail every workflow task of
 * the run, which then neither answers queries nor takes a cancel. An
 * activity's payloads still throw: an activity input or result comes from
 * the harness's own encoder, and a marker standing in for it could not be refused.
 */
export type UndecodablePolicy = 'throw' | 'refuse';

/**
 * Bytes (a metadata value, a payload's data) as text. They arrive as a Uint8Array, except an empty
 * value sent over raw gRPC, which reaches the worker as a plain array:
 * TextDecoder threw on it, outside every refusal, and failed the task.
 */
function bytesText(value: unknown): string {
  if (value instanceof Uint8Array) return decoder.decode(value);
  if (Array.isArray(value)) return decoder.decode(Uint8Array.from(value.map((b) => (typeof b === 'number' ? b & 255 : 0))));
  return '';
}

const encodingOf = (p: Payload): string | null => (p.metadata?.encoding ? bytesText(p.metadata.encoding) : null);

/** Whether this payload's failure becomes a marker: the worker's policy, on a workflow's payload. */
const refusing = (policy: UndecodablePolicy, context: SerializationContext | undefined): boolean => policy === 'refuse' && context?.type === 'workflow';

function markerPayload(why: string): Payload {
  return { metadata: { encoding: encoder.encode('json/plain') }, data: encoder.encode(JSON.stringify(undecodableMarker(why))) };
}

/** Decodes a Payload message; its bytes were bounded before (the unpack cap, or the ciphertext's own size). */
function payloadMessage(bytes: Uint8Array, what: string): Payload {
  try {
    return PayloadMessage.decode(bytes) as Payload;
  } catch (err) {
    // protobufjs's messages name offsets; a stack overflow on nested groups lands here too.
    throw new UndecodablePayloadError(`${what} is not a Temporal Payload message (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** The encodings the SDK's default payload converter (and its protobuf ones) read: any other fails the workflow task where it is converted. */
const CONVERTIBLE = new Set(['binary/null', 'binary/plain', 'json/plain', 'json/protobuf', 'binary/protobuf']);

/** Why a decoded payload would still fail its conversion in workflow code, or null. */
function conversionProblem(p: Payload): string | null {
  const encoding = encodingOf(p);
  if (encoding === null) return 'payload has no encoding';
  if (encoding === GZIP_ENCODING || encoding === ENCRYPTED_ENCODING) return `payload is still ${encoding} once decoded (packed twice)`;
  if (!CONVERTIBLE.has(encoding)) return `payload encoding ${JSON.stringify(encoding.slice(0, 64))} is not one a worker reads`;
  if (encoding !== 'json/plain') return null;
  if (!p.data) return 'json/plain payload has no data';
  try {
    JSON.parse(bytesText(p.data));
    return null;
  } catch {
    return 'json/plain payload is not valid JSON';
  }
}

export interface GzipCodecOptions {
  /** The most one payload may unpack to (default MAX_UNPACKED_PAYLOAD_BYTES). */
  maxUnpackedBytes?: number;
  /** What an undecodable payload becomes (default `throw`). */
  undecodable?: UndecodablePolicy;
}

export class GzipPayloadCodec implements PayloadCodec {
  private readonly maxUnpacked: number;
  private readonly policy: UndecodablePolicy;

  constructor(
    private readonly compressAboveBytes = DEFAULT_COMPRESS_ABOVE_BYTES,
    opts: GzipCodecOptions = {},
  ) {
    this.maxUnpacked = opts.maxUnpackedBytes ?? MAX_UNPACKED_PAYLOAD_BYTES;
    this.policy = opts.undecodable ?? 'throw';
  }

  /** The same codec under another policy (a worker given a client's converter: codec-plugin.ts). */
  withPolicy(undecodable: UndecodablePolicy): GzipPayloadCodec {
    return new GzipPayloadCodec(this.compressAboveBytes, { maxUnpackedBytes: this.maxUnpacked, undecodable });
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      if ((p.data?.length ?? 0) <= this.compressAboveBytes) return p;
      // The whole original payload (metadata and data) is compressed, so
      // decoding restores it exactly.
      const packed = gzipSync(PayloadMessage.encode(p).finish());
      return { metadata: { encoding: encoder.encode(GZIP_ENCODING) }, data: packed };
    });
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const refuse = refusing(this.policy, context);
    // Shared by the call's payloads: the per-call total.
    let left = Math.max(this.maxUnpacked, MAX_UNPACKED_BYTES_PER_CALL);
    return payloads.map((p) => {
      try {
        let out = p;
        if (encodingOf(p) === GZIP_ENCODING && p.data) {
          const cap = Math.max(1, Math.min(this.maxUnpacked, left));
          const unpacked = this.gunzip(p.data, cap);
          left -= unpacked.length;
          out = payloadMessage(unpacked, 'the unpacked binary/gzip payload');
        }
        // Last of the harness's decoders (the first to encode): what leaves here is what workflow code converts.
        const problem = refuse ? conversionProblem(out) : null;
        if (problem) throw new UndecodablePayloadError(problem);
        return out;
      } catch (err) {
        if (refuse && err instanceof UndecodablePayloadError) return markerPayload(err.message);
        throw err;
      }
    });
  }

  /** Gunzips to at most `cap` bytes: zlib stops there, so a bomb never holds more. */
  private gunzip(data: Uint8Array, cap: number): Buffer {
    try {
      return gunzipSync(data, { maxOutputLength: cap });
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
        throw new UndecodablePayloadError(
          cap < this.maxUnpacked
            ? `binary/gzip payloads of one message unpack to more than ${MAX_UNPACKED_BYTES_PER_CALL} bytes in all, the cap (docs/security.md)`
            : `binary/gzip payload unpacks to more than ${this.maxUnpacked} bytes, the cap (docs/security.md)`,
        );
      }
      throw new UndecodablePayloadError(`payload says binary/gzip but is not gzip data (${err instanceof Error ? err.message : String(err)})`);
    }
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
export class PayloadDecryptionError extends UndecodablePayloadError {
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
  private readonly policy: UndecodablePolicy;

  constructor(
    private readonly keys: readonly PayloadKey[],
    opts: { undecodable?: UndecodablePolicy } = {},
  ) {
    checkPayloadKeys(keys);
    this.policy = opts.undecodable ?? 'throw';
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

  /** The same keys under another policy. */
  withPolicy(undecodable: UndecodablePolicy): EncryptionPayloadCodec {
    return new EncryptionPayloadCodec(this.keys, { undecodable });
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const refuse = refusing(this.policy, context);
    return payloads.map((p) => {
      try {
        return this.decodeOne(p);
      } catch (err) {
        if (refuse && err instanceof UndecodablePayloadError) return markerPayload(err.message);
        throw err;
      }
    });
  }

  private decodeOne(p: Payload): Payload {
    // Payloads written before keys were set stay readable as they are.
    if (encodingOf(p) !== ENCRYPTED_ENCODING) return p;
    const rawId = p.metadata?.[KEY_ID_METADATA];
    const keyId = rawId ? bytesText(rawId) : '';
    const key = this.byId.get(keyId);
    // Key ids in messages are cut short: a hostile payload's id is as long as it likes.
    const shownId = JSON.stringify(keyId.slice(0, 64));
    if (!key) {
      const listed = this.byId.size ? `which is not among the configured keys (${[...this.byId.keys()].join(', ')})` : 'and no payload keys are configured';
      throw new PayloadDecryptionError(`payload encrypted with key id ${shownId}, ${listed}: add it to AGENT_PAYLOAD_KEYS`, keyId);
    }
    const data = p.data ?? new Uint8Array();
    const fail = () => new PayloadDecryptionError(`payload encrypted with key id ${shownId} does not verify: tampered, truncated, or another key under that id`, keyId);
    if (data.length < IV_BYTES + TAG_BYTES) throw fail();
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(encoder.encode(keyId));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw fail();
    }
    // No bigger than the ciphertext it came from (bounded by whoever sent it: Temporal's 2 MiB, the codec server's body cap).
    return payloadMessage(plain, `the decrypted payload (key id ${shownId})`);
  }
}

/** What agentDataConverter (and the worker's converter) are built with: the keys and what an undecodable payload becomes. */
export interface DataConverterOptions {
  /**
   * The payload keys as values (first encrypts, all decrypt). Absent: read
   * from AGENT_PAYLOAD_KEYS. null or empty: no encryption, whatever the
   * environment says.
   */
  payloadKeys?: readonly PayloadKey[] | null;
  /** What an undecodable payload becomes: `throw` (default: the client, the CLI, the codec server) or `refuse` (the worker: see UndecodablePolicy). */
  undecodable?: UndecodablePolicy;
}

/**
 * The codecs every side registers, in encoding order: gzip, then encryption.
 * Without keys the encryption codec passes every payload through as it is,
 * and is there only to refuse an encrypted one by its key id.
 */
export function payloadCodecs(opts: DataConverterOptions = {}): PayloadCodec[] {
  const keys = opts.payloadKeys === undefined ? payloadKeysFromEnv() : opts.payloadKeys;
  const policy = { undecodable: opts.undecodable ?? 'throw' } as const;
  return [new GzipPayloadCodec(DEFAULT_COMPRESS_ABOVE_BYTES, policy), new EncryptionPayloadCodec(keys ?? [], policy)];
}

/** The data converter of the client, the CLI and the tests (a worker's: `undecodable: 'refuse'`). Throws PayloadKeysError on a bad AGENT_PAYLOAD_KEYS. */
export function dataConverter(opts: DataConverterOptions = {}): DataConverter {
  return { payloadCodecs: payloadCodecs(opts) };
}

/** The data converter of a worker, or a replayer: an undecodable workflow payload becomes a marker the run refuses (UndecodablePolicy). */
export function workerDataConverter(opts: Omit<DataConverterOptions, 'undecodable'> = {}): DataConverter {
  return dataConverter({ ...opts, undecodable: 'refuse' });
}
