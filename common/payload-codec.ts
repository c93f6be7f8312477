// A payload codec that gzips large payloads: the transcript-carrying ones
// (the continue-as-new input, big query answers, a model call's input when its
// prompt travels whole: older runs, a message-store miss).
// Small payloads — workflow input, results, signals, updates, most queries —
// pass through untouched, so ops read them as plain JSON in the `temporal` CLI
// and the Web UI; `npm run codec-server` lets both show the compressed rest.
// Registered on the worker, the client, the CLI and the tests.
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { gunzipSync, gzipSync } from 'node:zlib';

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

export function dataConverter(): DataConverter {
  return { payloadCodecs: [new GzipPayloadCodec()] };
}
