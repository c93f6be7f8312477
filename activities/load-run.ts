// Reads a stopped run so a new run can continue it (`resumeFrom`): its input,
// its result (totals) and its transcript. Only the resumable exits qualify —
// the turn cap, the budget, an interruption, and a failure an outage explains
// (the provider unreachable, 5xx, 429 or a timeout, for longer than the run's
// allowance); a completed run or another failure is refused with the reason,
// and so is a run still going.
import { Context } from '@temporalio/activity';
import { QueryNotRegisteredError, WorkflowNotFoundError } from '@temporalio/client';
import { configQuery, transcriptQuery } from '../common/run-messages.js';
import type { AgentInput, RunResult } from '../common/contract.js';
import type { LoadedRun } from '../common/activity-contract.js';
import { isTransientProviderError } from '../common/provider-errors.js';
import { RESUMABLE_RULE } from '../common/resume-input.js';

export type { LoadedRun } from '../common/activity-contract.js';


const RESUMABLE = new Set(['max_turns_exceeded', 'budget_exceeded', 'interrupted']);

export async function loadRun({ workflowId }: { workflowId: string }): Promise<LoadedRun> {
  const client = Context.current().client;
  const handle = client.workflow.getHandle(workflowId);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { ok: false, reason: `there is no run ${JSON.stringify(workflowId)}` };
    throw err;
  }
  if (status === 'RUNNING') return { ok: false, reason: `run ${workflowId} is still running: cancel it, or wait for it to stop, before resuming it` };
  if (status !== 'COMPLETED') return { ok: false, reason: `run ${workflowId} ended as ${status.toLowerCase()} (a workflow failure, such as invalid input): there is no transcript to resume` };
  const result = (await handle.result()) as RunResult;
  if (!RESUMABLE.has(result.status) && !(result.status === 'failed' && isTransientProviderError(result.errorType))) {
    const why = result.status === 'completed' ? 'the model already answered' : `it failed (${result.error ?? 'no error recorded'}), and retrying cannot help`;
    return { ok: false, reason: `run ${workflowId} is ${result.status}: ${why}. ${RESUMABLE_RULE}` };
  }
  const history = await handle.fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) return { ok: false, reason: `run ${workflowId} has no input in its history` };
  const [decoded] = await client.options.loadedDataConverter.payloadCodecs.reduceRight(
    async (acc, codec) => codec.decode(await acc),
    Promise.resolve([payload]),
  );
  const input = client.options.loadedDataConverter.payloadConverter.fromPayload<AgentInput>(decoded);
  const messages = await handle.query(transcriptQuery);
  const config = await handle.query(configQuery).catch((err: unknown) => {
    // A run that failed before its loop set the query: its raw input is all there is.
    if (err instanceof QueryNotRegisteredError) return undefined;
    throw err;
  });
  return { ok: true, input, result, messages, ...(config ? { config } : {}) };
}
