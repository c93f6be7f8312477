// list_files: the workspace's regular files with their sizes. Fast and
// read-only, so it runs as a local activity.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defineTool, type ToolRun } from './define-tool.js';
import { NO_ARGS } from './parameters.js';

/** Regular files of the workspace (not hidden ones), one per line with its size. */
export const listFiles: ToolRun = async (ctx) => {
  const names = readdirSync(ctx.root, { withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  if (names.length === 0) return 'The workspace is empty.';
  return names.map((n) => `${n} (${statSync(join(ctx.root, n)).size} bytes)`).join('\n');
};

export default defineTool({
  name: 'list_files',
  description: 'List the files in the workspace with their sizes in bytes.',
  parameters: NO_ARGS,
  readOnly: true,
  activity: { local: true },
  origin: 'builtin',
  run: listFiles,
});
