// Where the workflow code is, for Worker.create and bundleWorkflowCode: the
// source under tsx and vitest, the compiled file from dist/ (./module-path.ts).
import { modulePath } from './module-path.js';

/** The harness's workflows module (`agentRun`): a worker that runs only the harness bundles this. */
export const WORKFLOWS_PATH = modulePath('../workflows/index.js', import.meta.url);

/**
 * Bundled with the workflows only when tracing is on: they cost every
 * activation some work in the sandbox, and a loop that is not traced should
 * not pay it. They add no command, so runs recorded with and without them
 * replay on either bundle. A prebuilt bundle (WORKFLOW_BUNDLE_PATH, or
 * Worker.create's workflowBundle) is used as built: build it with these
 * modules (bundleWorkflowCode's workflowInterceptorModules, or its plugins
 * given an AgentPlugin that traces) to get workflow spans from it.
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [modulePath('../workflows/telemetry.js', import.meta.url)];

/** Stateless libraries evaluated once per workflow thread, shared by its runs (bundlerOptions.preloadModules): see that module. */
export const SHARED_MODULES_PATH = modulePath('../workflows/shared-modules.js', import.meta.url);
