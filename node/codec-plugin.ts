// The client side of the harness's payload codec, as a plugin of a Temporal
// Client: `new Client({ plugins: [codecPlugin()] })`. Light on purpose: a
// client process imports neither the worker nor its native runtime for it.
import { fileURLToPath } from 'node:url';
import { SimplePlugin } from '@temporalio/plugin';
import type { DataConverter } from '@temporalio/common';
import { EncryptionPayloadCodec, GzipPayloadCodec, payloadCodecs, type DataConverterOptions } from './payload-codec.js';
import { payloadKeysFromEnv, type PayloadKey } from './payload-keys.js';

/** Whether these keys (absent: AGENT_PAYLOAD_KEYS) encrypt payloads. */
export function encryptsPayloads(keys: readonly PayloadKey[] | null | undefined): boolean {
  return ((keys === undefined ? payloadKeysFromEnv() : keys)?.length ?? 0) > 0;
}

/** Temporal's failure converter with encodeCommonAttributes (common/failure-converter.cjs, copied into dist/common/ by `npm run build`: the workflow bundle loads it too, so it lives with what the bundle may import). */
export const ENCODED_FAILURES_PATH = fileURLToPath(new URL('../common/failure-converter.cjs', import.meta.url));

/**
 * The harness's codec first, so it compresses before a team's own codec (an
 * encryption) encodes, and decodes after it; added once however many plugins
 * bring it.
 */
export function withHarnessCodec(existing: DataConverter | undefined, opts: DataConverterOptions = {}): DataConverter {
  const codecs = existing?.payloadCodecs ?? [];
  if (codecs.some((c) => c instanceof GzipPayloadCodec)) {
    // Already there (a worker given agentDataConverter(), a client's): a
    // worker still refuses what it cannot decode rather than failing its tasks.
    const policy = opts.undecodable;
    if (!policy) return existing ?? {};
    return { ...existing, payloadCodecs: codecs.map((c) => (c instanceof GzipPayloadCodec || c instanceof EncryptionPayloadCodec ? c.withPolicy(policy) : c)) };
  }
  // Compress, then encrypt (with AGENT_PAYLOAD_KEYS, or the keys given), then the team's own.
  const converter: DataConverter = { ...existing, payloadCodecs: [...payloadCodecs(opts), ...codecs] };
  // Encrypted payloads: failure messages (a tool's error text, the provider's) are encoded too, unless the team brings its own converter.
  if (encryptsPayloads(opts.payloadKeys) && !existing?.failureConverterPath) converter.failureConverterPath = ENCODED_FAILURES_PATH;
  return converter;
}

/** A Client plugin that adds the harness's codec to the client's data converter (what AgentPlugin adds to a worker). */
export function codecPlugin(opts: DataConverterOptions = {}): SimplePlugin {
  return new SimplePlugin({ name: 'AgentPlugin.codec', dataConverter: (existing) => withHarnessCodec(existing, opts) });
}
