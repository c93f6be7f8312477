// `npm run provider`: the scripted provider as a standalone process.
import { startProvider } from './server.js';

/** A time variable as the option it sets; a value that is not a number of ms >= 0 stops the start, naming the variable. */
function msEnv<K extends string>(name: string, option: K): Partial<Record<K, number>> {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return {};
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number of ms >= 0, got ${JSON.stringify(raw)}`);
  return { [option]: n } as Partial<Record<K, number>>;
}

const port = Number(process.env.PORT ?? 8787);
const provider = await startProvider({
  port,
  host: process.env.PROVIDER_HOST ?? '127.0.0.1',
  latencyMs: Number(process.env.PROVIDER_LATENCY_MS ?? 0),
  apiKey: process.env.PROVIDER_API_KEY || undefined,
  ...msEnv('PROVIDER_FIRST_TOKEN_MS', 'firstTokenMs'),
  ...msEnv('PROVIDER_MS_PER_TOKEN', 'msPerToken'),
  ...msEnv('PROVIDER_STREAM_CHUNK_MS', 'streamChunkDelayMs'),
});
console.log(`scripted provider listening on ${provider.url}`);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => void provider.close().then(() => process.exit(0)));
}
