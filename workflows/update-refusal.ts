// What an update's validator throws when it refuses: a plain Error reached the
// `temporal` CLI and the Web UI labelled "type: Error, retryable: true", as if
// sending the same update again might work. A refusal is a decision, not a
// fault: typed and not retryable, with the same message. Validators do not
// run on replay and a refused update leaves nothing in history, so this
// changes no recorded run.
import { ApplicationFailure } from '@temporalio/workflow';

export const UPDATE_REFUSED = 'UpdateRefused';

export function updateRefused(problem: string): ApplicationFailure {
  return ApplicationFailure.create({ type: UPDATE_REFUSED, message: problem, nonRetryable: true });
}
