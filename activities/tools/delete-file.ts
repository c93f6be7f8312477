// delete_file: the demo's one write. A person approves each call; the
// idempotency ledger makes a retried call act at most once.
import { CancelledFailure } from '@temporalio/common';
import { existsSync, statSync, unlinkSync } from 'node:fs';
import { defineTool, type ToolRun } from './define-tool';
import { crashPoint } from './crash-point';
import { ToolError } from './tool-error';
import { assertReadable, PATH_ARG, resolveInside } from './workspace';

/**
 * Deletes one file, at most once per idempotency key: the intent is recorded
 * before the unlink and the result after, so a retry after a crash between
 * the two finds the file gone *by this call* and reports success again.
 */
export const deleteFile: ToolRun = async (ctx, args) => {
  const rel = String(args.path);
  const full = resolveInside(ctx.root, rel);
  assertReadable(ctx.root, full);
  const prior = ctx.ledger.get(ctx.idempotencyKey);
  if (prior?.state === 'done') return prior.result;
  const result = `deleted ${rel}`;
  if (!existsSync(full)) {
    if (prior?.state === 'started') {
      ctx.ledger.put(ctx.idempotencyKey, { state: 'done', at: new Date().toISOString(), result });
      return result;
    }
    throw new ToolError(`no such file: ${rel}. Call list_files to see what exists.`);
  }
  if (!statSync(full).isFile()) throw new ToolError(`${rel} is not a regular file; only files can be deleted.`);
  await ctx.hooks.beforeAct?.(ctx.signal);
  // The last moment a Stop can prevent the write: past it, the write lands and
  // its result is reported (the workflow waits for it), so the transcript
  // says what really happened.
  if (ctx.signal.aborted) throw new CancelledFailure(`delete_file stopped before deleting ${rel}: nothing changed`);
  ctx.ledger.put(ctx.idempotencyKey, { state: 'started', at: new Date().toISOString() });
  await ctx.hooks.beforeCommit?.(ctx.signal);
  unlinkSync(full);
  crashPoint('delete_file:after_unlink');
  ctx.ledger.put(ctx.idempotencyKey, { state: 'done', at: new Date().toISOString(), result });
  return result;
};

export default defineTool({
  name: 'delete_file',
  description: 'Delete a file from the workspace. A person must approve each call.',
  parameters: { type: 'object', properties: { path: PATH_ARG }, required: ['path'], additionalProperties: false },
  readOnly: false,
  needsApproval: true,
  origin: 'builtin',
  run: deleteFile,
});
