// Every execution a test's runs left on the server, replayed on the current
// code. A run that continues as new is several executions, and a reset makes
// another run of the same workflow id: each has its own history, and a change
// that only a later execution would notice (it starts from carried state)
// passes unseen when only the first one is replayed.
import type { Client } from '@temporalio/client';
import type proto from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions, type WorkflowBundleOption } from '@temporalio/worker';
import { workerDataConverter } from '../../node/payload-codec.js';
import { REPLAY_SINKS } from '../../worker/create-worker.js';

type History = proto.temporal.api.history.v1.IHistory;

export interface Execution {
  workflowId: string;
  runId: string;
  history: History;
}

/** The run a history's last event hands over to: continue-as-new, or a retry or cron run. */
export function nextExecutionRunId(history: History): string | null {
  const last = history.events?.at(-1);
  const next =
    last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ||
    last?.workflowExecutionCompletedEventAttributes?.newExecutionRunId ||
    last?.workflowExecutionFailedEventAttributes?.newExecutionRunId ||
    last?.workflowExecutionTimedOutEventAttributes?.newExecutionRunId;
  return next || null;
}

/** A run chain's executions, first to last: from its first run id, each history's last event names the next. */
export async function chainExecutions(client: Client, workflowId: string, firstRunId: string): Promise<Execution[]> {
  const out: Execution[] = [];
  for (let runId: string | null = firstRunId; runId; ) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    out.push({ workflowId, runId, history });
    runId = nextExecutionRunId(history);
  }
  return out;
}

/** The child runs a history started (sub-agents), as their first executions. */
function childRuns(history: History): { workflowId: string; runId: string }[] {
  return (history.events ?? []).flatMap((e) => {
    const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
    return child?.workflowId && child.runId ? [{ workflowId: child.workflowId, runId: child.runId }] : [];
  });
}

/**
 * Every execution of these runs' chains and of the child runs they started,
 * plus any other run the server lists under the same workflow ids (a reset
 * run, another run of a reused id), each once.
 */
export async function everyExecution(client: Client, runs: readonly { workflowId: string; runId: string }[]): Promise<Execution[]> {
  const seen = new Map<string, Execution>();
  const ids = new Set<string>();
  const follow = async (workflowId: string, runId: string): Promise<void> => {
    if (seen.has(`${workflowId} ${runId}`)) return;
    ids.add(workflowId);
    for (const e of await chainExecutions(client, workflowId, runId)) {
      seen.set(`${workflowId} ${e.runId}`, e);
      for (const child of childRuns(e.history)) await follow(child.workflowId, child.runId);
    }
  };
  for (const { workflowId, runId } of runs) await follow(workflowId, runId);
  for (const workflowId of [...ids]) {
    for await (const w of client.workflow.list({ query: `WorkflowId = '${workflowId.replaceAll("'", "\\'")}'` })) await follow(workflowId, w.runId);
  }
  return [...seen.values()];
}

/** Replays these executions in one replay worker; a sentence per execution that does not replay (empty: all did). */
export async function replayFailures(workflowBundle: WorkflowBundleOption, executions: readonly Execution[], options: Partial<ReplayWorkerOptions> = {}): Promise<string[]> {
  const failures: string[] = [];
  const replay = Worker.runReplayHistories(
    {
      workflowBundle,
      sinks: REPLAY_SINKS,
      dataConverter: workerDataConverter(),
      ...options,
    },
    executions.map((e) => ({ workflowId: e.workflowId, history: e.history })),
  );
  let replayed = 0;
  for await (const r of replay) {
    replayed += 1;
    if (r.error) failures.push(`${r.workflowId} run ${executions[replayed - 1].runId}: ${String(r.error)}`);
  }
  if (replayed !== executions.length) failures.push(`only ${replayed} of ${executions.length} executions were replayed`);
  return failures;
}
