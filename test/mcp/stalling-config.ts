// The MCP config of test/mcp/fs-server.ts run as a third-party server that
// writes and then never answers: it ignores the idempotency key in _meta and
// stalls after each write. Annotations are not trusted (the default), so
// `write` is a write like any third-party one, neither read-only nor idempotent.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';

const SERVER = join(PROJECT_ROOT, 'test/mcp/fs-server.ts');

/** Writes the config into `dir`: the server's files go in `root`, its record of calls in `record`. */
export function writeStallingFsConfig(dir: string): { root: string; record: string; config: string } {
  const root = join(dir, 'files');
  const record = join(dir, 'record.jsonl');
  const config = join(dir, 'mcp.json');
  mkdirSync(root, { recursive: true });
  writeFileSync(
    config,
    JSON.stringify({
      servers: {
        fs: {
          command: process.execPath,
          args: ['--import', 'tsx', SERVER, '--root', root, '--record', record, '--ignore-keys', '--stall-after-write'],
          cwd: PROJECT_ROOT,
          tools: ['list', 'write', 'slow'],
          readOnly: ['list', 'slow'],
        },
      },
    }),
  );
  return { root, record, config };
}
