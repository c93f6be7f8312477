// The harness's command line: run (start and follow), approve, reject,
// cancel, status, transcript, result, trace, list. Exit codes tell the five
// exits apart (client/exit-codes.ts).
import { ApplicationFailure, WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
// parseArgs that takes `--flag -3` as the flag's value, so its own check names it (./parse-flags.ts).
import { parseFlags as parseArgs } from './parse-flags.js';
import { existsSync, statSync } from 'node:fs';
import { readTrace, readTraceFile, traceChains } from '../common/trace-format.js';
import { isArgsHashText } from '../common/args-hash.js';
import { loadConfig, type HarnessConfig } from '../common/config.js';
import { approveSignal, cancelSignal, decideUpdate, raiseBudgetUpdate, reconcileUpdate, rejectSignal, statusQuery, steerSignal, steerUpdate, transcriptQuery } from '../common/run-messages.js';
import type { RunResult, RunStatusView } from '../common/contract.js';
import { SUGGESTED_RAISE_CALLS, suggestedRaiseUsd } from '../common/budget-math.js';
import { connectClient } from './connect.js';
import { ALREADY_FINISHED, EXIT_CODES, NO_WORKER, NOT_FOUND, USAGE_ERROR } from './exit-codes.js';
import { ANSWER_WAIT_MS, boundedAnswer, noWorkerLine, runWorkers, withoutWorker } from './worker-check.js';
import { follow } from './follow.js';
import { chainOfRun, latestChain } from './run-history.js';
import { COMMANDS, commandUsage, fullUsage } from './commands.js';
import { inputFromFlags, numberFlag } from './run-flags.js';
import { resume, resumeArgs } from './resume.js';
import { startRun } from './start-run.js';
import { exportRun, forkArgs } from './fork-export.js';
import { checkFork } from './fork-check.js';
import { Refusal, UsageError } from './usage-error.js';

export { DEFAULT_TASK, inputFromFlags } from './run-flags.js';

export async function main(argv: string[], client?: Client): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(fullUsage());
    return command ? 0 : USAGE_ERROR;
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    console.error(`agent-harness: unknown command ${JSON.stringify(command)} (commands: ${Object.keys(COMMANDS).join(', ')}; agent-harness help)`);
    return USAGE_ERROR;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(commandUsage(command));
    return 0;
  }
  let cfg: HarnessConfig;
  try {
    cfg = loadConfig();
  } catch (err) {
    // A bad setting (a profile that is not there, a missing TLS file) is one line naming it.
    console.error(`agent-harness: ${err instanceof Error ? err.message : String(err)}`);
    return USAGE_ERROR;
  }
  try {
    // Flags are checked before connecting: a mistyped limit is refused at once.
    const runFlags = command === 'run' ? inputFromFlags(rest) : null;
    const resuming = command === 'resume' ? resumeArgs(rest) : null;
    const fork = command === 'fork' ? forkArgs(rest) : null;
    // Connected only by the commands that need the server: reading a trace file does not.
    let connected: Client | undefined = client;
    const conn = async (): Promise<Client> => (connected ??= await connectClient(cfg));
    switch (command) {
      case 'run':
        return await run(await conn(), runFlags ?? inputFromFlags(rest));
      case 'resume':
        return await resume(await conn(), resuming ?? resumeArgs(rest));
      case 'fork': {
        const f = fork ?? forkArgs(rest);
        await checkFork(await conn(), f);
        const workflowId = f.id ?? `${f.from}-fork-${randomUUID().slice(0, 6)}`;
        return await startRun(await conn(), f.input, workflowId, f.detach, `fork of ${f.from}`);
      }
      case 'export':
        return await exportRun(await conn(), rest);
      case 'approve':
      case 'reject':
        return await decide(conn, command, rest);
      case 'steer':
        return await steer(conn, rest);
      case 'raise-budget':
        return await raiseBudget(conn, rest);
      case 'reconcile':
        return await reconcile(conn, rest);
      case 'cancel': {
        const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { reason: { type: 'string' } } });
        const workflowId = need(positionals[0], 'workflowId');
        await (await conn()).workflow.getHandle(workflowId).signal(cancelSignal, { reason: values.reason ?? 'cancelled from the CLI' });
        console.log(`cancel sent to ${workflowId}`);
        return 0;
      }
      case 'status':
      case 'transcript':
        return await ask(await conn(), command, need(rest[0], 'workflowId'));
      case 'result': {
        const workflowId = need(rest[0], 'workflowId');
        const r = await (await conn()).workflow.getHandle(workflowId).result().then(
          (ok) => ok as RunResult,
          (err: unknown) => {
            // A run that failed outright (bad input, a refused resume) has no result
            // object: print the same fields a failed result has, with the cause.
            if (!(err instanceof WorkflowFailedError)) throw err;
            const cause = err.cause;
            const errorType = cause instanceof ApplicationFailure ? (cause.type ?? 'ApplicationFailure') : (cause?.name ?? 'WorkflowFailed');
            const error = cause?.message ?? err.message;
            return { runId: workflowId, workflowId, status: 'failed', agentStatus: 'failed', reason: error, error, errorType } as const;
          },
        );
        console.log(JSON.stringify(r, null, 2));
        return EXIT_CODES[r.status];
      }
      case 'trace': {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { follow: { type: 'boolean' }, 'run-id': { type: 'string' } },
        });
        const workflowId = need(positionals[0], 'workflowId');
        // A trace file's path (an exported or copied trace) is read as it is: no server, no TRACE_DIR.
        const file = traceFileArg(workflowId);
        if (file !== null) {
          if (values.follow || values['run-id'] !== undefined) throw new UsageError('--follow and --run-id take a workflow id, not a trace file');
          if (!existsSync(file)) {
            console.error(`no trace file ${file}`);
            return NOT_FOUND;
          }
          for (const l of readTraceFile(file)) console.log(JSON.stringify(l));
          return 0;
        }
        const chainId = await traceChainFor(conn, cfg.traceDir, workflowId, values['run-id'], values.follow === true);
        if (values.follow) {
          const c = await conn();
          const wait = () => c.workflow.getHandle(workflowId, values['run-id']).result() as Promise<RunResult>;
          const r = await follow(workflowId, wait, { traceDir: cfg.traceDir, chainId });
          return EXIT_CODES[r.status];
        }
        const lines = readTrace(cfg.traceDir, workflowId, chainId);
        if (lines.length === 0) console.error(`no trace for ${workflowId}${chainId ? ` run ${chainId}` : ''} under ${cfg.traceDir} (TRACE_DIR)`);
        for (const l of lines) console.log(JSON.stringify(l));
        return lines.length ? 0 : NOT_FOUND;
      }
      case 'list':
        return await list(conn, rest);
      default:
        // Every command in COMMANDS has a case above.
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    // One line naming what is wrong, and where the command's usage is.
    if (err instanceof UsageError) {
      console.error(`agent-harness ${command}: ${err.message} (see agent-harness ${command} --help)`);
      return USAGE_ERROR;
    }
    const parseError = argsError(err);
    if (parseError) {
      console.error(`agent-harness ${command}: ${parseError} (see agent-harness ${command} --help)`);
      return USAGE_ERROR;
    }
    if (err instanceof Refusal) {
      console.error(err.message);
      return 1;
    }
    if (err instanceof WorkflowUpdateFailedError) {
      console.error(`refused: ${err.cause?.message ?? err.message}`);
      return 1;
    }
    // The server answers "not found" for a run that has finished too: tell them apart by its words.
    const text = err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? '')}` : String(err);
    if (/already completed|already finished|workflow execution already/i.test(text)) {
      console.error(`the run has already finished: ${err instanceof Error ? err.message : String(err)}`);
      return ALREADY_FINISHED;
    }
    if (err instanceof WorkflowNotFoundError) {
      console.error(`no such run: ${err.workflowId ?? err.message}`);
      return NOT_FOUND;
    }
    // Connection failures (one line from connectClient) and anything unforeseen.
    console.error(`agent-harness: ${err instanceof Error ? err.message : String(err)}`);
    return USAGE_ERROR;
  }
}

/** node:util parseArgs's complaint (an unknown option, a missing value) in a few words, or null for any other error. */
function argsError(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (!(err instanceof TypeError) || typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) return null;
  // "Unknown option '--foo'. To specify a positional argument starting with a '-', ..." → the first sentence.
  return err.message.split(/\.\s/)[0].replace(/\.$/, '');
}

/** `trace`'s argument as a file: a file that exists, or a name ending in .jsonl (a workflow id never needs to); null for a workflow id. */
function traceFileArg(arg: string): string | null {
  if (existsSync(arg) && statSync(arg).isFile()) return arg;
  return arg.endsWith('.jsonl') ? arg : null;
}

function need(v: string | undefined, name: string): string {
  if (!v) throw new UsageError(`missing <${name}>`);
  return v;
}

/**
 * The chain whose trace to show: run R's (its own trace file, or the chain
 * history links it to: a later execution, a reset run's); without R, the
 * only chain on disk (no server needed), or, when the id has run several
 * times, the chain of the run the server holds as current. Never the
 * files' timestamps: they come from the clocks of the hosts that wrote them.
 */
async function traceChainFor(conn: () => Promise<Client>, traceDir: string, workflowId: string, runId: string | undefined, follow: boolean): Promise<string | undefined> {
  const onDisk = traceChains(traceDir, workflowId);
  if (runId !== undefined) return onDisk.includes(runId) ? runId : chainOfRun(await conn(), workflowId, runId);
  // A followed run may not have written its first line yet: the server knows which run it is.
  if (onDisk.length <= 1 && !follow) return onDisk[0];
  return latestChain(await conn(), workflowId);
}

/** Every state in which a run waits for a person (an approval, a raise, a reconciliation): what `list --awaiting` shows. */
const PARKED_ON_A_PERSON = ['awaiting_approval', 'awaiting_budget', 'awaiting_reconciliation'];

const AGENT_STATUSES = ['running', 'awaiting_approval', 'awaiting_budget', 'awaiting_reconciliation', 'completed', 'failed', 'max_turns_exceeded', 'budget_exceeded', 'interrupted'];

/** Runs found through their search attributes, as a table with a header. */
async function list(conn: () => Promise<Client>, rest: string[]): Promise<number> {
  const { values } = parseArgs({
    args: rest,
    options: { awaiting: { type: 'boolean' }, status: { type: 'string' }, 'min-cost': { type: 'string' }, limit: { type: 'string' } },
  });
  if (values.status !== undefined && !AGENT_STATUSES.includes(values.status)) {
    throw new UsageError(`--status must be one of ${AGENT_STATUSES.join(', ')}, got ${JSON.stringify(values.status)}`);
  }
  const minCost = numberFlag('min-cost', values['min-cost']);
  const limitN = numberFlag('limit', values.limit, { integer: true }) ?? 50;
  const clauses = [`WorkflowType = 'agentRun'`];
  if (values.awaiting) clauses.push(`AgentStatus IN (${PARKED_ON_A_PERSON.map((st) => `'${st}'`).join(', ')})`);
  if (values.status) clauses.push(`AgentStatus = '${values.status}'`);
  if (typeof minCost === 'number') clauses.push(`AgentCostUsd >= ${minCost}`);
  const rows: string[][] = [['WORKFLOW ID', 'TEMPORAL', 'AGENT STATUS', 'TURNS', 'COST USD', 'AWAITING', 'STARTED']];
  for await (const w of (await conn()).workflow.list({ query: clauses.join(' AND ') })) {
    const sa = (name: string) => w.searchAttributes?.[name]?.[0];
    const awaiting = sa('AgentAwaitingTool') ? `${String(sa('AgentAwaitingTool'))} ${String(sa('AgentAwaitingCallId') ?? '')}` : '';
    const cost = sa('AgentCostUsd');
    rows.push([w.workflowId, w.status.name, String(sa('AgentStatus') ?? ''), String(sa('AgentTurns') ?? ''), cost === undefined ? '' : Number(cost).toFixed(6), awaiting, w.startTime.toISOString()]);
    if (rows.length > limitN) break;
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
  return 0;
}

async function run(c: Client, flags: ReturnType<typeof inputFromFlags>): Promise<number> {
  const { input, id, detach } = flags;
  const workflowId = id ?? `run-${input.model ?? 'plan'}-${randomUUID().slice(0, 8)}`;
  return startRun(c, input, workflowId, detach, `run ${workflowId}`, { command: 'run', of: (field) => (field === 'tools' && flags.toolsFlag ? '--tools' : null) });
}

/** A person's word on a write whose outcome is unknown: it happened (and what happened), or try it again. */
async function reconcile(conn: () => Promise<Client>, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { happened: { type: 'string' }, retry: { type: 'boolean' }, by: { type: 'string' } },
  });
  const workflowId = need(positionals[0], 'workflowId');
  const callId = need(positionals[1], 'callId');
  if ((values.happened === undefined) === (values.retry !== true)) throw new UsageError('reconcile takes one of --happened "what happened" and --retry');
  const by = values.by ?? process.env.USER ?? 'cli';
  const input = values.retry === true ? { callId, outcome: 'retry' as const, by } : { callId, outcome: 'happened' as const, result: values.happened, by };
  const c = await conn();
  const view = await viaWorker(c, workflowId, `reconcile ${callId}`, () => c.workflow.getHandle(workflowId).executeUpdate(reconcileUpdate, { args: [input] }));
  if (typeof view === 'number') return view;
  console.log(`reconciled ${callId} on ${workflowId} (${input.outcome}); run is now ${view.agentStatus} (turns=${view.turns} cost=$${view.costUsd.toFixed(6)})`);
  return 0;
}

async function decide(conn: () => Promise<Client>, decision: 'approve' | 'reject', rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { reason: { type: 'string' }, by: { type: 'string' }, 'args-hash': { type: 'string' }, 'when-worker-returns': { type: 'boolean' } },
  });
  const workflowId = need(positionals[0], 'workflowId');
  const callId = need(positionals[1], 'callId');
  const hash = values['args-hash'];
  if (hash !== undefined && !isArgsHashText(hash)) throw new UsageError(`--args-hash must be 64 hex digits (the status's interruption.argsHash), got ${JSON.stringify(hash)}`);
  const input = { callId, decision, reason: values.reason, by: values.by ?? process.env.USER ?? 'cli', ...(hash !== undefined ? { argsHash: hash.toLowerCase() } : {}) };
  const c = await conn();
  const handle = c.workflow.getHandle(workflowId);
  // The signals' inputs: the same fields, the verdict in the signal's name (approve has no reason).
  const signalInput = { callId, by: input.by, ...(input.argsHash !== undefined ? { argsHash: input.argsHash } : {}) };
  const view = await viaWorker(c, workflowId, `${decision} ${callId}`, () => handle.executeUpdate(decideUpdate, { args: [input] }), {
    name: decision,
    send: () => (decision === 'approve' ? handle.signal(approveSignal, signalInput) : handle.signal(rejectSignal, { ...signalInput, ...(input.reason !== undefined ? { reason: input.reason } : {}) })),
    requested: values['when-worker-returns'] === true,
  });
  if (typeof view === 'number') return view;
  console.log(`${decision === 'approve' ? 'approved' : 'rejected'} ${callId} on ${workflowId}; run is now ${view.status} (turns=${view.turns} cost=$${view.costUsd.toFixed(6)})`);
  return 0;
}

/** `steer RUN "message"`: queued by the steer update (refused at once, naming why, when the run cannot take it). */
async function steer(conn: () => Promise<Client>, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { by: { type: 'string' }, interrupt: { type: 'boolean' }, 'when-worker-returns': { type: 'boolean' } } });
  const workflowId = need(positionals[0], 'workflowId');
  const message = positionals[1];
  if (message === undefined) throw new UsageError('missing <message>');
  if (positionals.length > 2) throw new UsageError(`one message, quoted: got ${positionals.length - 1} words (agent-harness steer ${workflowId} "look in logs/")`);
  if (message.trim() === '') throw new UsageError('the message is empty');
  const input = { message, by: values.by ?? process.env.USER ?? 'cli', ...(values.interrupt ? { interrupt: true } : {}) };
  const c = await conn();
  const handle = c.workflow.getHandle(workflowId);
  const view = await viaWorker(c, workflowId, 'the message', () => handle.executeUpdate(steerUpdate, { args: [input] }), {
    name: 'steer',
    send: () => handle.signal(steerSignal, input),
    requested: values['when-worker-returns'] === true,
  });
  if (typeof view === 'number') return view;
  const queued = view.queuedSteers.length;
  const when = values.interrupt ? 'calls not yet run are declined with it; the model reads it at the next turn boundary' : 'the model reads it at the next turn boundary';
  console.log(`message queued for ${workflowId} (${queued} queued): ${when}; run is ${view.agentStatus} (turns=${view.turns})`);
  return 0;
}

/** `raise-budget RUN --to USD`: the raiseBudget update; a refusal (not higher, a soft budget, a child) prints its reason and exits 1. */
async function raiseBudget(conn: () => Promise<Client>, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { to: { type: 'string' }, by: { type: 'string' }, reason: { type: 'string' } } });
  const workflowId = need(positionals[0], 'workflowId');
  const to = numberFlag('to', values.to);
  if (to === undefined || to === null) throw new UsageError('missing --to USD (the new budget)');
  const c = await conn();
  const view = await viaWorker(c, workflowId, `the raise to $${to}`, () => c.workflow.getHandle(workflowId).executeUpdate(raiseBudgetUpdate, {
    args: [{ maxBudgetUsd: to, by: values.by ?? process.env.USER ?? 'cli', ...(values.reason !== undefined ? { reason: values.reason } : {}) }],
  }));
  if (typeof view === 'number') return view;
  console.log(raiseOutcome(workflowId, to, view));
  return 0;
}

/**
 * What an accepted raise did. The update answers before the parked run wakes,
 * so its status still reads awaiting_budget: say instead whether the new
 * budget pays for the call the run parked on, and for how many like it.
 */
function raiseOutcome(workflowId: string, to: number, view: RunStatusView): string {
  const from = view.budget?.raises.at(-1)?.fromUsd;
  const raised = `budget of ${workflowId} raised${from === undefined ? '' : ` from $${from}`} to $${to}`;
  const totals = `(turns=${view.turns} cost=$${view.costUsd.toFixed(6)})`;
  const s = view.interruption?.type === 'budget' ? view.interruption : null;
  if (s === null) return `${raised}; the run was not parked on its budget: it goes on ${totals}`;
  if (to < s.needBudgetUsd) {
    return (
      `${raised}, but its next model call needs $${s.needUsd.toFixed(6)} at worst, a budget of at least $${s.needBudgetUsd}: ` +
      `the run stays parked awaiting_budget; raise-budget ${workflowId} --to ${suggestedRaiseUsd(s)} gives it room for ${SUGGESTED_RAISE_CALLS} calls like it ${totals}`
    );
  }
  const calls = s.needUsd > 0 ? 1 + Math.floor((to - s.needBudgetUsd) / s.needUsd + 1e-9) : null;
  const room = calls === null ? '' : `, about ${calls} call${calls === 1 ? '' : 's'} like it at that rate before it parks again`;
  return `${raised}; the run goes on: its next model call needs $${s.needUsd.toFixed(6)} at worst${room} ${totals}`;
}

/** A signal that records the same request durably (in the run's history): the run applies or ignores it when a worker takes it. */
interface DurableForm {
  name: string;
  send: () => Promise<void>;
  /** --when-worker-returns: send it when no worker polls. */
  requested: boolean;
}

/**
 * An update that needs a worker: sent only when a worker polls the run's
 * queue, and answered within ANSWER_WAIT_MS or said to be unanswered. With no
 * worker it is not sent (an update the server holds would apply whenever a
 * worker comes back, behind the operator's back), unless `durable` is given
 * (--when-worker-returns): then the signal of the same name is sent instead,
 * and said to be recorded. A run that has finished gets the update as before
 * (refused at once: exit 7). Returns the update's answer or the exit code.
 */
async function viaWorker(c: Client, workflowId: string, what: string, update: () => Promise<RunStatusView>, durable: DurableForm | null = null): Promise<RunStatusView | number> {
  const { description, workers } = await runWorkers(c, workflowId);
  if (description.status.name !== 'RUNNING') return update();
  if (!workers.polling) {
    if (durable?.requested) {
      await durable.send();
      console.log(`recorded ${what} for ${workflowId} as the ${durable.name} signal; it applies when a worker takes the run (${noWorkerLine(workers)})`);
      return 0;
    }
    const signalFlag = durable ? '; or pass --when-worker-returns to record it now, applied when a worker takes the run' : '';
    console.error(`not sent: ${noWorkerLine(workers)}, so ${what} was not sent to ${workflowId}; start a worker on ${workers.taskQueue} and try again${signalFlag}`);
    return NO_WORKER;
  }
  const answer = await boundedAnswer(c, ANSWER_WAIT_MS, update);
  if (answer !== 'no-answer') return answer;
  console.error(
    `sent ${what} to ${workflowId}, but no worker answered within ${ANSWER_WAIT_MS / 1000} s (task queue ${workers.taskQueue}); ` +
      `it may still apply when a worker takes the run: check with agent-harness status ${workflowId}`,
  );
  return NO_WORKER;
}

/**
 * `status` and `transcript`: the run's query, when a worker polls its queue
 * and answers in time. Otherwise one line saying so and, for status, what
 * Temporal itself holds for the run (execution status, search attributes).
 */
async function ask(c: Client, command: 'status' | 'transcript', workflowId: string): Promise<number> {
  const { description, workers } = await runWorkers(c, workflowId);
  const handle = c.workflow.getHandle(workflowId);
  const answer = workers.polling ? await boundedAnswer(c, ANSWER_WAIT_MS, (): Promise<unknown> => (command === 'status' ? handle.query(statusQuery) : handle.query(transcriptQuery))) : 'no-answer';
  if (answer !== 'no-answer') {
    console.log(JSON.stringify(answer, null, 2));
    return 0;
  }
  console.error(workers.polling ? `no worker answered the ${command} query within ${ANSWER_WAIT_MS / 1000} s (task queue ${workers.taskQueue})` : noWorkerLine(workers));
  if (command === 'status') {
    console.error('what Temporal holds for the run without a worker (search attributes as of its last status change):');
    console.log(JSON.stringify(withoutWorker(description), null, 2));
  }
  return NO_WORKER;
}
