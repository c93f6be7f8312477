// A worker that cannot be created, as the one line a person reads.
import { errorLine } from '../node/connection-errors.js';
import { SearchAttributesNotReady } from './search-attribute-check.js';
import { ToolsetConflict } from './tool-routing.js';

/**
 * Worker.create failed: a missing WORKFLOW_BUNDLE_PATH file is named with its
 * variable; a refusal of the plugin's start-up checks is given whole.
 */
export function workerNotCreated(err: unknown, workflowBundlePath: string | undefined): string {
  const e = err as NodeJS.ErrnoException | null;
  if (workflowBundlePath && e?.code === 'ENOENT' && e.path === workflowBundlePath) {
    return `WORKFLOW_BUNDLE_PATH names ${workflowBundlePath}, which does not exist: build the bundle there, or unset it to bundle workflows/ at start`;
  }
  return startupRefusal(err);
}

/**
 * A start-up check's refusal whole (the namespace's search attributes, the
 * queue's other workers): its lines after the first are the commands to run
 * and the workers in the way. Anything else: its first line.
 */
export function startupRefusal(err: unknown): string {
  return err instanceof SearchAttributesNotReady || err instanceof ToolsetConflict ? err.message : errorLine(err);
}
