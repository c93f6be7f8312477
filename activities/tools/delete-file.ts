// delete_file: the demo's one write. A person approves each call; the effect
// protocol (activities/effects/protocol.ts) makes a retried call act at most
// once and say what really happened.
import { CancelledFailure } from '@temporalio/common';
import { defineTool, type ArgsOf, type ToolRun } from './define-tool.js';
import { NothingChanged } from './tool-error.js';
import { PATH_ONLY } from './parameters.js';

/**
 * Deletes one file. The harness has claimed the call before this runs and
 * records the result after; everything up to the unlink changes nothing, so
 * its failures release the claim (NothingChanged), and the claim is checked
 * once more right before the unlink. Both the check and the unlink go
 * through the sealed workspace (ctx.files): the unlink resolves, opens and
 * checks the file again, so a link swapped in while the call waited (for its
 * hooks, its claim) deletes nothing outside the workspace.
 */
export const deleteFile: ToolRun<ArgsOf<typeof PATH_ONLY>> = async (ctx, { path: rel }) => {
  try {
    await ctx.files.stat(rel);
  } catch (err) {
    throw err instanceof NothingChanged ? err : new NothingChanged(err);
  }
  await ctx.hooks.beforeAct?.(ctx.signal);
  // The last moment a Stop can prevent the write: past it, the write lands and
  // its result is reported (the workflow waits for it), so the transcript
  // says what really happened.
  if (ctx.signal.aborted) throw new NothingChanged(new CancelledFailure(`delete_file stopped before deleting ${rel}: nothing changed`));
  await ctx.hooks.beforeCommit?.(ctx.signal);
  await ctx.effect.confirm();
  // Its refusals come as NothingChanged: nothing was deleted.
  await ctx.files.remove(rel);
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
