// The activities of one worker, built from its configuration. Workflows import
// only the *type* of this object (see workflows/agent-run.ts).
import { createCallModel, type ModelDeps } from './model';
import { createRunTool, type ToolDeps } from './tools/run-tool';

export type ActivityDeps = ModelDeps & ToolDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    callModel: createCallModel(deps),
    runTool: createRunTool(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
