// A worker that cannot be created, as the one line a person reads.
import { errorLine } from '../common/connection-errors';

/** Worker.create failed: a missing WORKFLOW_BUNDLE_PATH file is named with its variable. */
export function workerNotCreated(err: unknown, workflowBundlePath: string | undefined): string {
  const e = err as NodeJS.ErrnoException | null;
  if (workflowBundlePath && e?.code === 'ENOENT' && e.path === workflowBundlePath) {
    return `WORKFLOW_BUNDLE_PATH names ${workflowBundlePath}, which does not exist: build the bundle there, or unset it to bundle workflows/ at start`;
  }
  return errorLine(err);
}
