// delete_file: the demo's one write. A person approves each call; the effect
// protocol (activities/effects/protocol.ts) makes a retried call act at most
// once and say what really happened.
import { CancelledFailure } from '@temporalio/common';
import { existsSync, statSync, unlinkSync } from 'node:fs';
import { defineTool, type ArgsOf, type ToolRun } from './define-tool.js';
import { crashPoint } from './crash-point.js';
import { NothingChanged, ToolError } from './tool-error.js';
import { PATH_ONLY } from './parameters.js';
import { assertReadable, resolveInside } from './workspace.js';

/**
 * Deletes one file. The harness has claimed the call before this runs and
 * records the result after; everything up to the unlink changes nothing, so
 * its failures release the claim (NothingChanged), and the claim is checked
 * once more right before the unlink.
 */
export const deleteFile: ToolRun<ArgsOf<typeof PATH_ONLY>> = async (ctx, { path: rel }) => {
  let full: string;
  try {
    full = resolveInside(ctx.root, rel);
    assertReadable(ctx.root, full);
    if (!existsSync(full)) throw new ToolError(`no such file: ${rel}. Call list_files to see what exists.`);
    if (!statSync(full).isFile()) throw new ToolError(`${rel} is not a regular file; only files can be deleted.`);
  } catch (err) {
    throw new NothingChanged(err);
  }
  await ctx.hooks.beforeAct?.(ctx.signal);
  // The last moment a Stop can prevent the write: past it, the write lands and
  // its result is reported (the workflow waits for it), so the transcript
  // says what really happened.
  if (ctx.signal.aborted) throw new NothingChanged(new CancelledFailure(`delete_file stopped before deleting ${rel}: nothing changed`));
  await ctx.hooks.beforeCommit?.(ctx.signal);
  await ctx.effect.confirm();
  unlinkSync(full);
  crashPoint('delete_file:after_unlink');
  return `deleted ${rel}`;
};

export default defineTool({
  name: 'delete_file',
  description: 'Delete a file from the workspace. A person must approve each call.',
  parameters: PATH_ONLY,
  readOnly: false,
  pastTense: 'deleted',
  needsApproval: true,
  origin: 'builtin',
  run: deleteFile,
});
