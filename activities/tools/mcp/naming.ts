// What the harness calls an MCP tool: `<prefix>_<tool>`, cut to the spec's
// TOOL_NAME rule (letters, digits, `_`, `-`; at most 64 characters). A name
// that must be shortened keeps a hash of the whole, so two long names that
// share their first 55 characters stay apart.
import { createHash } from 'node:crypto';
import { TOOL_NAME } from '../../../common/tool-spec.js';

const MAX = 64;

export function harnessToolName(prefix: string, mcpName: string): string {
  const full = `${sanitise(prefix)}_${sanitise(mcpName)}`;
  const name = full.length <= MAX ? full : `${full.slice(0, MAX - 9)}_${createHash('sha256').update(full).digest('hex').slice(0, 8)}`;
  if (!TOOL_NAME.test(name)) throw new Error(`cannot name MCP tool ${JSON.stringify(mcpName)} of ${prefix}: ${JSON.stringify(name)}`);
  return name;
}

const sanitise = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_') || '_';
