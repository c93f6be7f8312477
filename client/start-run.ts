// Starts an agentRun for `run`, `resume` and `fork`: prints its workflow id
// (`--detach`), or follows it and returns the exit code of its exit.
import { ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { loadConfig } from '../common/config.js';
import type { AgentInput } from '../common/contract.js';
import { startingAttributes } from '../workflows/visibility.js';
import { EXIT_CODES, USAGE_ERROR } from './exit-codes.js';
import { runAndFollow, summaryOf } from './follow.js';
import { noWorkerLine, queueWorkers } from './worker-check.js';

/**
 * `what`: the run as the failure line names it (`run ID`, `resume of ID`).
 * `flag`: the command and the flag that set an input field, when it did. Which
 * tools exist is only the worker's to say (its own modules, its MCP servers),
 * so `--tools nope` is checked by the run's first step; its refusal is then a
 * usage error naming the flag, as a bad value checked here would be.
 */
export async function startRun(
  c: Client,
  input: AgentInput,
  workflowId: string,
  detach: boolean,
  what: string,
  flag?: { command: string; of: (field: string) => string | null },
): Promise<number> {
  const cfg = loadConfig();
  if (detach) {
    await c.workflow.start('agentRun', { taskQueue: cfg.taskQueue, workflowId, args: [input], staticSummary: summaryOf(input), typedSearchAttributes: startingAttributes(input) });
    // stdout stays the workflow id alone (scripts read it); the warning goes to stderr.
    console.log(workflowId);
    await warnWithoutWorker(c, cfg.taskQueue);
    return 0;
  }
  try {
    // The start line comes before anything waits on a worker: without one, the run's own lines never come.
    const onStart = async () => {
      console.log(`started ${workflowId} on task queue ${cfg.taskQueue}`);
      await warnWithoutWorker(c, cfg.taskQueue);
    };
    const r = await runAndFollow(c, input, { taskQueue: cfg.taskQueue, traceDir: cfg.traceDir, workflowId, live: process.stdout.isTTY, onStart });
    return EXIT_CODES[r.status];
  } catch (err) {
    // A run that fails outright (bad input, a refused resume) is a workflow failure, not a result.
    const refused = flag ? flagRefusal(err, flag.of) : null;
    if (flag && refused) {
      console.error(`agent-harness ${flag.command}: ${refused} (see agent-harness ${flag.command} --help)`);
      return USAGE_ERROR;
    }
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    console.error(`${what} failed: ${cause ?? (err instanceof Error ? err.message : String(err))}`);
    return EXIT_CODES.failed;
  }
}

/** The worker's InvalidInput for a field a flag set, as "<flag> <problem>"; null for any other failure. */
function flagRefusal(err: unknown, flagOf: (field: string) => string | null): string | null {
  if (!(err instanceof WorkflowFailedError) || !(err.cause instanceof ApplicationFailure) || err.cause.type !== 'InvalidInput') return null;
  const field = (err.cause.details?.[0] as { field?: unknown } | undefined)?.field;
  const flag = typeof field === 'string' ? flagOf(field) : null;
  const prefix = `invalid input: ${String(field)} `;
  return flag && err.cause.message.startsWith(prefix) ? `${flag} ${err.cause.message.slice(prefix.length)}` : null;
}

/** One line when no worker polls the queue: the run is started and waits there until one does. */
async function warnWithoutWorker(c: Client, taskQueue: string): Promise<void> {
  const workers = await queueWorkers(c, taskQueue);
  if (!workers.polling) console.error(`warning: ${noWorkerLine(workers)}: the run waits until one does`);
}
