// The client side of the harness's payload codec, as a plugin of a Temporal
// Client: `new Client({ plugins: [codecPlugin()] })`. Light on purpose: a
// client process imports neither the worker nor its native runtime for it.
import { SimplePlugin } from '@temporalio/plugin';
import type { DataConverter } from '@temporalio/common';
import { EncryptionPayloadCodec, GzipPayloadCodec, payloadCodecs, type DataConverterOptions } from './payload-codec.js';

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
  return { ...existing, payloadCodecs: [...payloadCodecs(opts), ...codecs] };
}

/** A Client plugin that adds the harness's codec to the client's data converter (what AgentPlugin adds to a worker). */
export function codecPlugin(opts: DataConverterOptions = {}): SimplePlugin {
  return new SimplePlugin({ name: 'AgentPlugin.codec', dataConverter: (existing) => withHarnessCodec(existing, opts) });
}
