import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolImpl } from './context';

/** Regular files of the workspace (not hidden ones), one per line with its size. */
export const listFiles: ToolImpl = async (ctx) => {
  const names = readdirSync(ctx.root, { withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  if (names.length === 0) return 'The workspace is empty.';
  return names.map((n) => `${n} (${statSync(join(ctx.root, n)).size} bytes)`).join('\n');
};
