// The experiment settings of experiments/ and of the tests that reproduce
// the chapter's failure modes: never a run's input, set here, per workflow id,
// in the configuration a run resolves at its start, on the harness's own
// workers (AgentWorkerOptions.seams). A production worker has no way to turn
// them on.
import { Context } from '@temporalio/activity';
import type { PluginSeams } from '../../worker/agent-plugin.js';

export interface ExperimentSettings {
  /** `retry`: an error the model cannot act on is handed back to it like any other (the chapter's loop). */
  permanentToolErrors?: 'stop' | 'retry';
  /** A rejected call's result is empty instead of the decision in words. */
  emptyRejection?: boolean;
}

/** Which runs (by workflow id) run with which experiment settings; `seams` installs it in a worker. */
export class Experiments {
  private readonly byWorkflowId = new Map<string, ExperimentSettings>();

  /** The run started with this workflow id resolves these settings. */
  set(workflowId: string, settings: ExperimentSettings): string {
    this.byWorkflowId.set(workflowId, settings);
    return workflowId;
  }

  seams(): PluginSeams {
    return {
      wrapActivities: (activities) => ({
        ...activities,
        resolveConfig: async (input) => {
          const resolved = await activities.resolveConfig(input);
          const s = this.byWorkflowId.get(Context.current().info.workflowExecution?.workflowId ?? '');
          if (!resolved.ok || !s) return resolved;
          return {
            ok: true,
            cfg: {
              ...resolved.cfg,
              ...(s.permanentToolErrors ? { permanentToolErrors: s.permanentToolErrors } : {}),
              ...(s.emptyRejection ? { experimentalEmptyRejection: true } : {}),
            },
          };
        },
      }),
    };
  }
}
