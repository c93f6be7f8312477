// `npm run codec-server` (CODEC_PORT, default 8888; CODEC_HOST; CODEC_ALLOW_ORIGIN,
// default the Web UI npm start runs; AGENT_CODEC_TOKEN; CODEC_MAX_BODY_BYTES;
// AGENT_PAYLOAD_KEYS): the same server as `agent-harness codec-server`
// (./codec-server-command.ts), which takes these as flags too. A bad setting
// stops it at start with one line naming it.
import { loadConfig } from '../node/config.js';
import { codecServerCommand } from './codec-server-command.js';

try {
  process.exitCode = await codecServerCommand(process.argv.slice(2), loadConfig().devServer.uiPort);
} catch (err) {
  console.error(`codec server not started: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
