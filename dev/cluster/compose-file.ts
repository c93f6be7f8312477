// Reads what docker-compose.yml gives a service: its `environment:` mapping.
// The native cluster (dev/cluster/cluster.ts) starts each process with the env the
// compose file gives its container, overriding only what containers change
// (host names, ports, bind address), so the two cannot drift apart.
// A small reader for this file's shape (block mappings, `KEY: value` lines),
// not a YAML parser: it fails naming the service when the shape changes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';

export const COMPOSE_FILE = join(PROJECT_ROOT, 'docker-compose.yml');

const unquote = (v: string) => v.replace(/^(["'])(.*)\1$/, '$2');

/** The `environment:` of `service` in the compose file, as strings. */
export function composeServiceEnv(service: string, file = COMPOSE_FILE): Record<string, string> {
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines.findIndex((l) => l === `  ${service}:`);
  if (start < 0) throw new Error(`${file}: no service ${service}`);
  const end = lines.findIndex((l, i) => i > start && /^ {0,2}\S/.test(l));
  const body = lines.slice(start + 1, end < 0 ? undefined : end);
  const envAt = body.findIndex((l) => /^ {4}environment:/.test(l));
  if (envAt < 0) throw new Error(`${file}: service ${service} has no environment`);
  const env: Record<string, string> = {};
  for (const l of body.slice(envAt + 1)) {
    if (/^ {0,4}\S/.test(l)) break;
    const m = /^ {6}([A-Z0-9_]+):\s*(.*?)\s*$/.exec(l);
    if (m) env[m[1]] = unquote(m[2]);
  }
  if (Object.keys(env).length === 0) throw new Error(`${file}: service ${service}: no KEY: value lines under environment`);
  return env;
}
