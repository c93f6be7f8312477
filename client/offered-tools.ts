// Which tools the workers of a task queue offer, when the server's list of
// its pollers says: every worker's identity carries the hash of its tool
// names (`tools:1a2b3c4d`, worker/tool-routing.ts). A hash is not a list, so
// only the built-in tool set, whose names the client knows, can be read back
// from it; any other set (tool modules, MCP servers) is the worker's to say,
// and its run refuses an unknown name at its first step.
import type { Client } from '@temporalio/client';
import { createHash } from 'node:crypto';
import { queuePollers } from '../node/queue-pollers.js';

/** The built-in tools' names (activities/tools/builtin.ts; a test keeps the two equal). */
export const BUILTIN_TOOL_NAMES: readonly string[] = ['list_files', 'read_file', 'delete_file', 'scan_archive', 'research'];

/** worker/tool-routing.ts's toolsetHash, without the worker's imports. */
export function toolNamesHash(names: readonly string[]): string {
  return createHash('sha256').update([...names].sort().join('\n')).digest('hex').slice(0, 8);
}

const IDENTITY_HASH = /(?:^|\s)tools:([0-9a-f]{8})(?:\s|$)/;

/** The tools every live worker of the queue offers, when they all offer the built-in set; null when unknown (no worker, another set, a mix). */
export async function offeredTools(c: Client, taskQueue: string): Promise<readonly string[] | null> {
  const live = (await queuePollers(c, c.options.namespace, taskQueue, ['workflow'])).filter((p) => p.live);
  if (live.length === 0) return null;
  const builtin = toolNamesHash(BUILTIN_TOOL_NAMES);
  return live.every((p) => IDENTITY_HASH.exec(p.identity)?.[1] === builtin) ? BUILTIN_TOOL_NAMES : null;
}
