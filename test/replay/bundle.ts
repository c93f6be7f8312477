// The workflows bundled with extra interceptor modules, for replays that
// observe or deliberately change what the code does (test/replay/*.ts).
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { WORKFLOWS_PATH } from '../../worker/create-worker.js';

const noop = () => {};
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };

/** A module in this folder, as a path the bundler takes. */
export const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

export async function bundleWith(interceptorModules: string[]): Promise<WorkflowBundle> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: interceptorModules, logger: quiet });
  return { code };
}
