// Starts an agentRun for `run`, `resume` and `fork` through AgentClient:
// prints its workflow id (`--detach`), or follows it and returns the exit
// code of its exit.
import type { AgentClient } from './agent-client.js';
import { AgentClientError, CannotResumeError, InvalidInputError, RunFailedError, RunNotFoundError } from './agent-errors.js';
import type { AgentRunHandle } from './run-handle.js';
import { loadConfig } from '../node/config.js';
import { EXIT_CODES, USAGE_ERROR } from './exit-codes.js';
import { followRun } from './follow.js';
import { noWorkerLine } from './worker-check.js';

/**
 * `start`: AgentClient's start, resume or fork. `what`: the run as the
 * failure line names it (`run ID`, `resume of ID`). `flag`: the command and
 * the flag that set an input field, when it did. Which tools exist is only
 * the worker's to say (its own modules, its MCP servers), so `--tools nope`
 * is checked by the run's first step; its refusal is then a usage error
 * naming the flag, as a bad value checked before the start would be.
 */
export async function startRun(
  agent: AgentClient,
  start: () => Promise<AgentRunHandle>,
  detach: boolean,
  what: string,
  flag?: { command: string; of: (field: string) => string | null },
): Promise<number> {
  if (detach) {
    const handle = await start();
    for (const note of handle.notes) console.error(note);
    // stdout stays the workflow id alone (scripts read it); the warning goes to stderr.
    console.log(handle.workflowId);
    const polled = await warnWithoutWorker(handle);
    // Tool names the client could not check (a worker's own tool set) are checked by the run's first
    // step: wait for it, so a run refused at its start never exits 0.
    if (polled && flag?.of('tools')) {
      const failed = await failedAtStart(handle);
      if (failed) {
        const refused = flagRefusal(failed, flag.of);
        console.error(refused ? `agent-harness ${flag.command}: ${refused} (see agent-harness ${flag.command} --help)` : `${what} failed: ${failed.reason}`);
        return refused ? USAGE_ERROR : EXIT_CODES.failed;
      }
    }
    return 0;
  }
  const started = Date.now();
  try {
    const handle = await start();
    for (const note of handle.notes) console.error(note);
    // The start line comes before anything waits on a worker: without one, the run's own lines never come.
    console.log(`started ${handle.workflowId} on task queue ${agent.taskQueue}`);
    await warnWithoutWorker(handle);
    const r = await followRun(handle, { traceDir: loadConfig().traceDir, live: process.stdout.isTTY, started });
    return EXIT_CODES[r.status];
  } catch (err) {
    // Refused before any run started: the command's own refusal (main prints it).
    if (err instanceof InvalidInputError || err instanceof CannotResumeError || err instanceof RunNotFoundError) throw err;
    // A run that fails outright (bad input, a refused resume) is a workflow failure, not a result.
    const refused = flag && err instanceof RunFailedError ? flagRefusal(err, flag.of) : null;
    if (flag && refused) {
      console.error(`agent-harness ${flag.command}: ${refused} (see agent-harness ${flag.command} --help)`);
      return USAGE_ERROR;
    }
    const reason = err instanceof RunFailedError ? err.reason : causeLine(err);
    console.error(`${what} failed: ${reason}`);
    return EXIT_CODES.failed;
  }
}

/** The worker's InvalidInput for a field a flag set, as "<flag> <problem>"; null for any other failure. */
function flagRefusal(err: RunFailedError, flagOf: (field: string) => string | null): string | null {
  if (err.errorType !== 'InvalidInput' || err.field === undefined) return null;
  const flag = flagOf(err.field);
  const prefix = `invalid input: ${err.field} `;
  return flag && err.reason.startsWith(prefix) ? `${flag} ${err.reason.slice(prefix.length)}` : null;
}

/** What the server said, for a start that failed some other way (the SDK's error under ours). */
function causeLine(err: unknown): string {
  const e = err instanceof AgentClientError && err.cause instanceof Error ? err.cause : err;
  const cause = (e as { cause?: { message?: string } }).cause?.message;
  return cause ?? (e instanceof Error ? e.message : String(e));
}

/** One line when no worker polls the queue: the run is started and waits there until one does. Whether one polls. */
async function warnWithoutWorker(handle: AgentRunHandle): Promise<boolean> {
  const workers = await handle.workers();
  if (!workers.polling) console.error(`warning: ${noWorkerLine(workers)}: the run waits until one does`);
  return workers.polling;
}

/** How long `--detach` waits for a run's first step when it must (the run's first workflow task, done in well under a second by a live worker). */
const FIRST_STEP_WAIT_MS = 10_000;

/**
 * The run's failure when it failed at its first step (its first workflow
 * task completed: history holds Started, Scheduled, Started, Completed, and
 * a refusal closes the run in that same task), or null: it went on, or no
 * worker took it within FIRST_STEP_WAIT_MS.
 */
async function failedAtStart(handle: AgentRunHandle): Promise<RunFailedError | null> {
  const deadline = Date.now() + FIRST_STEP_WAIT_MS;
  for (;;) {
    const d = await handle.workflow.describe();
    if (d.status.name === 'FAILED') return handle.result().then(() => null, (err: unknown) => (err instanceof RunFailedError ? err : null));
    if (d.status.name !== 'RUNNING' || d.historyLength >= 4 || Date.now() > deadline) return null;
    await new Promise((r) => setTimeout(r, 100));
  }
}
