// `npm run provider`: the scripted provider as a standalone process.
import { startProvider } from './server.js';

const port = Number(process.env.PORT ?? 8787);
const provider = await startProvider({
  port,
  host: process.env.PROVIDER_HOST ?? '127.0.0.1',
  latencyMs: Number(process.env.PROVIDER_LATENCY_MS ?? 0),
  apiKey: process.env.PROVIDER_API_KEY || undefined,
  ...(process.env.PROVIDER_STREAM_CHUNK_MS ? { streamChunkDelayMs: Number(process.env.PROVIDER_STREAM_CHUNK_MS) } : {}),
});
console.log(`scripted provider listening on ${provider.url}`);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => void provider.close().then(() => process.exit(0)));
}
