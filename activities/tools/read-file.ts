// read_file: one text file of the workspace, cut at READ_LIMIT_BYTES. Fast and
// read-only, so it runs as a local activity.
import { defineTool, type ArgsOf, type ToolRun } from './define-tool.js';
import { PATH_ONLY } from './parameters.js';

/** Larger files are cut here, with a note the model can read: a result is one history payload. */
export const READ_LIMIT_BYTES = 64 * 1024;

/**
 * Through the sealed workspace (ctx.files): the path judged where it
 * resolves (`readme.txt -> .env` is a secret), the file opened without
 * following a link and checked on its descriptor, a FIFO refused unopened.
 */
export const readFile: ToolRun<ArgsOf<typeof PATH_ONLY>> = async (ctx, { path: rel }) => {
  const { text, size, truncated } = await ctx.files.read(rel, { maxBytes: READ_LIMIT_BYTES });
  return truncated ? `${text}\n[truncated: ${rel} is ${size} bytes; only the first ${READ_LIMIT_BYTES} are shown]` : text;
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
