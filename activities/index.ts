// The activities of one worker, built from its configuration. Workflows import
// only the *type* of this object (see workflows/agent-run.ts).
import { BUILT_IN_DEFAULTS } from '../workflows/defaults';
import type { RunDefaults } from '../workflows/types';
import { createCallModel, type ModelDeps } from './model';
import { loadRun } from './load-run';
import { createResolveConfig } from './resolve-config';
import { createRunTool, type ToolDeps } from './tools/run-tool';

export type ActivityDeps = ModelDeps & ToolDeps & { defaults?: Partial<RunDefaults> };

export function createActivities(deps: ActivityDeps) {
  const callModel = createCallModel(deps);
  return {
    resolveConfig: createResolveConfig({ ...BUILT_IN_DEFAULTS, ...deps.defaults }),
    // Inputs with every message whole: histories and in-flight calls from before addresses.
    callModel,
    // Inputs with messages by address. A new name, so that during a rolling
    // deploy a worker that predates addresses never runs such a call: it fails
    // the attempt (a retryable NotFoundError) and a retry reaches a new worker.
    callModelByAddress: callModel,
    runTool: createRunTool(deps),
    loadRun,
  };
}

export type Activities = ReturnType<typeof createActivities>;
