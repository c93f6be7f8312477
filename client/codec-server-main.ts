// `npm run codec-server` (CODEC_PORT, default 8888; CODEC_HOST; CODEC_ALLOW_ORIGIN,
// default the Web UI npm start runs; AGENT_CODEC_TOKEN; CODEC_MAX_BODY_BYTES;
// AGENT_PAYLOAD_KEYS). A bad setting stops it at start with one line naming it.
import { loadConfig } from '../common/config.js';
import { codecServerOptionsFromEnv, startCodecServer } from './codec-server.js';

try {
  const opts = codecServerOptionsFromEnv(loadConfig().devServer.uiPort);
  const { url } = await startCodecServer(Number(process.env.CODEC_PORT ?? 8888), process.env.CODEC_HOST ?? '127.0.0.1', opts);
  console.log(`codec server on ${url}${opts.token ? ' (bearer token required)' : ''}: temporal ... --codec-endpoint ${url}`);
} catch (err) {
  console.error(`codec server not started: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
