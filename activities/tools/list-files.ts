// list_files: the workspace's regular files with their sizes. Fast and
// read-only, so it runs as a local activity.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineTool, type ToolRun } from './define-tool.js';
import { NO_ARGS } from './parameters.js';

/**
 * Regular files of the workspace (not hidden ones), one per line with its
 * size. Symbolic links are skipped, never followed: a link's target may be
 * outside the workspace, and even its size is not the workspace's to tell.
 * The size is read with lstat, so an entry swapped for a link between the
 * listing and the stat is skipped too, not followed.
 */
export const listFiles: ToolRun = async (ctx) => {
  const lines: string[] = [];
  const names = readdirSync(ctx.root, { withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  for (const n of names) {
    let st;
    try {
      st = lstatSync(join(ctx.root, n));
    } catch {
      continue;
    }
    if (st.isFile()) lines.push(`${n} (${st.size} bytes)`);
  }
  return lines.length === 0 ? 'The workspace is empty.' : lines.join('\n');
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
