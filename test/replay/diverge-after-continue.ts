// A deliberate determinism break that only a continued execution notices (one
// timer more before it starts), bundled with the workflows by
// test/continue-as-new.test.ts to show that every execution of a chain is
// replayed: replaying the first execution alone passes on it.
import { sleep, workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        if (workflowInfo().continuedFromExecutionRunId) await sleep(1);
        return next(input);
      },
    },
  ],
});
