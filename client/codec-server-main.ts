// `npm run codec-server` (CODEC_PORT, default 8888; CODEC_ALLOW_ORIGIN for the Web UI's origin).
import { startCodecServer } from './codec-server.js';

const { url } = await startCodecServer(Number(process.env.CODEC_PORT ?? 8888), process.env.CODEC_HOST ?? '127.0.0.1', process.env.CODEC_ALLOW_ORIGIN ?? '*');
console.log(`codec server on ${url}: temporal ... --codec-endpoint ${url}`);
