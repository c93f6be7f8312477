// The client side of the harness's payload codec, as a plugin of a Temporal
// Client: `new Client({ plugins: [codecPlugin()] })`. Light on purpose: a
// client process imports neither the worker nor its native runtime for it.
import { SimplePlugin } from '@temporalio/plugin';
import type { DataConverter } from '@temporalio/common';
import { GzipPayloadCodec } from './payload-codec.js';

/**
 * The harness's codec first, so it compresses before a team's own codec (an
 * encryption) encodes, and decodes after it; added once however many plugins
 * bring it.
 */
export function withHarnessCodec(existing: DataConverter | undefined): DataConverter {
  const codecs = existing?.payloadCodecs ?? [];
  if (codecs.some((c) => c instanceof GzipPayloadCodec)) return existing ?? {};
  return { ...existing, payloadCodecs: [new GzipPayloadCodec(), ...codecs] };
}

/** A Client plugin that adds the harness's codec to the client's data converter (what AgentPlugin adds to a worker). */
export function codecPlugin(): SimplePlugin {
  return new SimplePlugin({ name: 'AgentPlugin.codec', dataConverter: withHarnessCodec });
}
