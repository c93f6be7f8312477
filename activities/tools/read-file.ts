// read_file: one text file of the workspace, cut at READ_LIMIT_BYTES. Fast and
// read-only, so it runs as a local activity.
import { existsSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { defineTool, type ArgsOf, type ToolRun } from './define-tool.js';
import { ToolError } from './tool-error.js';
import { PATH_ONLY } from './parameters.js';
import { assertReadable, resolveInside } from './workspace.js';

/** Larger files are cut here, with a note the model can read: a result is one history payload. */
export const READ_LIMIT_BYTES = 64 * 1024;

export const readFile: ToolRun<ArgsOf<typeof PATH_ONLY>> = async (ctx, { path: rel }) => {
  const full = resolveInside(ctx.root, rel);
  assertReadable(ctx.root, full);
  if (!existsSync(full)) throw new ToolError(`no such file: ${rel}. Call list_files to see what exists.`);
  const st = statSync(full);
  if (!st.isFile()) throw new ToolError(`${rel} is not a regular file. Call list_files to see what exists.`);
  const fd = openSync(full, 'r');
  try {
    const buf = Buffer.alloc(Math.min(st.size, READ_LIMIT_BYTES));
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString('utf8');
    return st.size > READ_LIMIT_BYTES
      ? `${text}\n[truncated: ${rel} is ${st.size} bytes; only the first ${READ_LIMIT_BYTES} are shown]`
      : text;
  } finally {
    closeSync(fd);
  }
};

export default defineTool({
  name: 'read_file',
  description: 'Read a text file from the workspace.',
  parameters: PATH_ONLY,
  readOnly: true,
  activity: { local: true },
  origin: 'builtin',
  run: readFile,
});
