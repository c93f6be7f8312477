// Bundled with the workflows for replay only (test/replay/compare.ts): reports
// what the current code asks for while it replays a saved history — each
// activity's and child run's input, the continue-as-new input, the result or
// the failure — so the replay test can compare them with what the history
// recorded. The SDK's own replay check compares command types only: an input
// or a result computed differently passes it unnoticed.
import { proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export interface CapturedCall {
  kind: 'activity' | 'local' | 'child';
  type: string;
  args: unknown[];
}

export interface CaptureSinks extends Sinks {
  capture: {
    call(call: CapturedCall): void;
    continueAsNew(args: unknown[]): void;
    result(value: unknown): void;
    failure(message: string): void;
  };
}

const { capture } = proxySinks<CaptureSinks>();

/**
 * The workflow may change an argument object after scheduling (the loop keeps
 * appending to its transcript); the history holds it as it was serialized at
 * that moment, so it is copied now, the way the payload converter sees it.
 */
const snapshot = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        try {
          const result = await next(input);
          capture.result(snapshot(result));
          return result;
        } catch (err) {
          // Continue-as-new leaves through an exception too: it is reported by its own hook.
          if (err instanceof Error && err.name !== 'ContinueAsNew') capture.failure(err.message);
          throw err;
        }
      },
    },
  ],
  outbound: [
    {
      scheduleActivity(input, next) {
        capture.call({ kind: 'activity', type: input.activityType, args: snapshot(input.args) });
        return next(input);
      },
      scheduleLocalActivity(input, next) {
        // A local activity is scheduled again on each attempt; only the first counts.
        if (input.attempt === 1) capture.call({ kind: 'local', type: input.activityType, args: snapshot(input.args) });
        return next(input);
      },
      startChildWorkflowExecution(input, next) {
        capture.call({ kind: 'child', type: input.workflowType, args: snapshot(input.options.args ?? []) });
        return next(input);
      },
      continueAsNew(input, next) {
        capture.continueAsNew(snapshot(input.args));
        return next(input);
      },
    },
  ],
});
