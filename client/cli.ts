// The harness's command line: run (start and follow), approve, reject,
// cancel, status, transcript, result, trace, list. Exit codes tell the five
// exits apart (client/exit-codes.ts).
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { readTrace, traceChains } from '../common/trace-format';
import { loadConfig, type HarnessConfig } from '../common/config';
import { cancelSignal, decideUpdate, statusQuery, transcriptQuery } from '../workflows/messages';
import type { AgentInput, RunResult } from '../common/contract';
import { connectClient } from './connect';
import { ALREADY_FINISHED, EXIT_CODES, NOT_FOUND, USAGE_ERROR } from './exit-codes';
import { follow, runAndFollow, summaryOf } from './follow';
import { chainOfRun, latestChain } from './run-history';

const USAGE = `usage: agent-harness <command> [options]
  run [--task T] [--model M] [--max-turns N|none] [--budget USD|none] [--tool-errors describe|generic|fatal]
      [--dedupe readOnly|off|all] [--tools a,b] [--workspace NAME] [--approval-timeout-ms MS] [--id RUN_ID]
      [--input JSON] [--detach] [--debug: print each model request, messages numbered]
  resume <runId> [--max-turns N|none] [--budget USD|none] [--approval-timeout-ms MS] [--id NEW_ID] [--detach]
                          a new run continuing a stopped one (turn cap, budget, interrupted): its transcript
                          and totals carry on, pending calls first; the limits count the totals
  approve <runId> <callId> [--by NAME]
  reject <runId> <callId> [--reason TEXT] [--by NAME]
  cancel <runId> [--reason TEXT]
  status <runId>          query the live status
  transcript <runId>      query the messages
  result <runId>          wait for the result (exit code = its status)
  trace <runId> [--run-id R] [--follow]
                          print the JSONL trace of the current run of that id, or of run R
                          (any execution's run id; an id can be used again or reset)
  list [--awaiting] [--status S] [--min-cost USD] [--limit N]
                          runs as a table, newest first; --awaiting: parked on a person
  <command> --help         that command's usage (no server needed)
exit codes: completed 0, failed 1, usage/connection error 2, max_turns_exceeded 3, budget_exceeded 4, interrupted 5,
  no such run (or no trace for it) 6, run already finished 7`;

/** One usage line per command, for `<command> --help`. */
const COMMAND_USAGE: Record<string, string> = (() => {
  const out: Record<string, string> = {};
  let current: string | null = null;
  for (const line of USAGE.split('\n').slice(1)) {
    const name = /^ {2}([a-z]+)\b/.exec(line)?.[1];
    if (name) out[(current = name)] = line.trim();
    // A deeper-indented line continues the command above it.
    else if (current && /^ {4,}/.test(line)) out[current] += `\n  ${line.trim()}`;
    else current = null;
  }
  return out;
})();

export const DEFAULT_TASK = 'Which file in the workspace mentions a timeout, and what does it say?';

class UsageError extends Error {}

export async function main(argv: string[], client?: Client): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    console.log(USAGE);
    return command ? 0 : USAGE_ERROR;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    const usage = COMMAND_USAGE[command];
    console.log(usage ? `usage: agent-harness ${usage}` : USAGE);
    return usage ? 0 : USAGE_ERROR;
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
    // Connected only by the commands that need the server: reading a trace file does not.
    let connected: Client | undefined = client;
    const conn = async (): Promise<Client> => (connected ??= await connectClient(cfg));
    switch (command) {
      case 'run':
        return await run(await conn(), runFlags ?? inputFromFlags(rest));
      case 'resume':
        return await resume(await conn(), rest);
      case 'approve':
      case 'reject':
        return await decide(await conn(), command, rest);
      case 'cancel': {
        const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { reason: { type: 'string' } } });
        const runId = need(positionals[0], 'runId');
        await (await conn()).workflow.getHandle(runId).signal(cancelSignal, { reason: values.reason ?? 'cancelled from the CLI' });
        console.log(`cancel sent to ${runId}`);
        return 0;
      }
      case 'status':
        console.log(JSON.stringify(await (await conn()).workflow.getHandle(need(rest[0], 'runId')).query(statusQuery), null, 2));
        return 0;
      case 'transcript':
        console.log(JSON.stringify(await (await conn()).workflow.getHandle(need(rest[0], 'runId')).query(transcriptQuery), null, 2));
        return 0;
      case 'result': {
        const r = (await (await conn()).workflow.getHandle(need(rest[0], 'runId')).result()) as RunResult;
        console.log(JSON.stringify(r, null, 2));
        return EXIT_CODES[r.status];
      }
      case 'trace': {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { follow: { type: 'boolean' }, 'run-id': { type: 'string' } },
        });
        const runId = need(positionals[0], 'runId');
        const chainId = await traceChainFor(conn, cfg.traceDir, runId, values['run-id'], values.follow === true);
        if (values.follow) {
          const c = await conn();
          const wait = () => c.workflow.getHandle(runId, values['run-id']).result() as Promise<RunResult>;
          const r = await follow(runId, wait, { traceDir: cfg.traceDir, chainId });
          return EXIT_CODES[r.status];
        }
        const lines = readTrace(cfg.traceDir, runId, chainId);
        if (lines.length === 0) console.error(`no trace for ${runId}${chainId ? ` run ${chainId}` : ''} under ${cfg.traceDir} (TRACE_DIR)`);
        for (const l of lines) console.log(JSON.stringify(l));
        return lines.length ? 0 : NOT_FOUND;
      }
      case 'list':
        return await list(await conn(), rest);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    if (err instanceof UsageError || (err instanceof TypeError && 'code' in err)) {
      console.error(`${err.message}\n\n${USAGE}`);
      return USAGE_ERROR;
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
    console.error(err instanceof Error ? err.message : String(err));
    return USAGE_ERROR;
  }
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

/** A numeric flag: a number, or (for limits) `none`; anything else is a usage error naming the flag. */
function numberFlag(flag: string, v: string | undefined, opts: { none?: boolean; integer?: boolean } = {}): number | null | undefined {
  if (v === undefined) return undefined;
  if (opts.none && v === 'none') return null;
  // Number('') is 0 and Number('1e3') is 1000: only plain decimals pass.
  const n = /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isFinite(n) || n <= 0 || (opts.integer && !Number.isInteger(n))) {
    const want = opts.integer ? 'a positive whole number' : 'a positive number';
    throw new UsageError(`--${flag} must be ${want}${opts.none ? ' or "none"' : ''}, got ${JSON.stringify(v)}`);
  }
  return n;
}

export function inputFromFlags(rest: string[]): { input: AgentInput; id: string | undefined; detach: boolean } {
  const { values } = parseArgs({
    args: rest,
    options: {
      task: { type: 'string' },
      model: { type: 'string' },
      'max-turns': { type: 'string' },
      budget: { type: 'string' },
      'tool-errors': { type: 'string' },
      dedupe: { type: 'string' },
      tools: { type: 'string' },
      workspace: { type: 'string' },
      'approval-timeout-ms': { type: 'string' },
      input: { type: 'string' },
      id: { type: 'string' },
      detach: { type: 'boolean' },
      debug: { type: 'boolean' },
    },
  });
  const base = values.input ? parseInputFlag(values.input) : { task: DEFAULT_TASK };
  const limits = { ...base.limits };
  const maxTurns = numberFlag('max-turns', values['max-turns'], { none: true, integer: true });
  const budget = numberFlag('budget', values.budget, { none: true });
  const approvalTimeoutMs = numberFlag('approval-timeout-ms', values['approval-timeout-ms'], { none: true, integer: true });
  if (maxTurns !== undefined) limits.maxTurns = maxTurns;
  if (budget !== undefined) limits.maxBudgetUsd = budget;
  // Values go through unchecked: the workflow validates its input and names the bad field.
  const input = {
    ...base,
    ...(values.task ? { task: values.task } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(values['tool-errors'] ? { toolErrors: values['tool-errors'] } : {}),
    ...(values.dedupe ? { dedupe: values.dedupe } : {}),
    ...(values.tools ? { tools: values.tools.split(',') } : {}),
    ...(values.workspace ? { workspace: values.workspace } : {}),
    ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
    ...(values.debug ? { debug: true } : {}),
  } as AgentInput;
  return { input, id: values.id, detach: values.detach ?? false };
}

/** `resume RUN`: the workflow reads the stopped run and refuses, naming why, when it cannot continue it. */
async function resume(c: Client, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { 'max-turns': { type: 'string' }, budget: { type: 'string' }, 'approval-timeout-ms': { type: 'string' }, id: { type: 'string' }, detach: { type: 'boolean' } },
  });
  const from = need(positionals[0], 'runId');
  const maxTurns = numberFlag('max-turns', values['max-turns'], { none: true, integer: true });
  const budget = numberFlag('budget', values.budget, { none: true });
  const approvalTimeoutMs = numberFlag('approval-timeout-ms', values['approval-timeout-ms'], { none: true, integer: true });
  const limits = { ...(maxTurns !== undefined ? { maxTurns } : {}), ...(budget !== undefined ? { maxBudgetUsd: budget } : {}) };
  const input = { resumeFrom: from, ...(Object.keys(limits).length ? { limits } : {}), ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}) } as AgentInput;
  const workflowId = values.id ?? `${from}-resumed-${randomUUID().slice(0, 6)}`;
  return startRun(c, input, workflowId, values.detach ?? false, `resume of ${from}`);
}

const AGENT_STATUSES = ['running', 'awaiting_approval', 'completed', 'failed', 'max_turns_exceeded', 'budget_exceeded', 'interrupted'];

/** Runs found through their search attributes, as a table with a header. */
async function list(c: Client, rest: string[]): Promise<number> {
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
  if (values.awaiting) clauses.push(`AgentStatus = 'awaiting_approval'`);
  if (values.status) clauses.push(`AgentStatus = '${values.status}'`);
  if (typeof minCost === 'number') clauses.push(`AgentCostUsd >= ${minCost}`);
  const rows: string[][] = [['RUN ID', 'TEMPORAL', 'AGENT STATUS', 'TURNS', 'COST USD', 'AWAITING', 'STARTED']];
  for await (const w of c.workflow.list({ query: clauses.join(' AND ') })) {
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

function parseInputFlag(text: string): AgentInput {
  try {
    return JSON.parse(text) as AgentInput;
  } catch (err) {
    throw new UsageError(`--input is not valid JSON: ${(err as Error).message}`);
  }
}

async function run(c: Client, flags: ReturnType<typeof inputFromFlags>): Promise<number> {
  const { input, id, detach } = flags;
  const workflowId = id ?? `run-${input.model ?? 'plan'}-${randomUUID().slice(0, 8)}`;
  return startRun(c, input, workflowId, detach, `run ${workflowId}`);
}

/** Starts a run: prints its id (`--detach`), or follows it and exits with the code of its exit. */
async function startRun(c: Client, input: AgentInput, workflowId: string, detach: boolean, what: string): Promise<number> {
  const cfg = loadConfig();
  if (detach) {
    await c.workflow.start('agentRun', { taskQueue: cfg.taskQueue, workflowId, args: [input], staticSummary: summaryOf(input) });
    console.log(workflowId);
    return 0;
  }
  try {
    const r = await runAndFollow(c, input, { taskQueue: cfg.taskQueue, traceDir: cfg.traceDir, workflowId, live: process.stdout.isTTY });
    return EXIT_CODES[r.status];
  } catch (err) {
    // A run that fails outright (bad input, a refused resume) is a workflow failure, not a result.
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    console.error(`${what} failed: ${cause ?? (err instanceof Error ? err.message : String(err))}`);
    return EXIT_CODES.failed;
  }
}

async function decide(c: Client, decision: 'approve' | 'reject', rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { reason: { type: 'string' }, by: { type: 'string' } },
  });
  const runId = need(positionals[0], 'runId');
  const callId = need(positionals[1], 'callId');
  const view = await c.workflow.getHandle(runId).executeUpdate(decideUpdate, {
    args: [{ callId, decision, reason: values.reason, by: values.by ?? process.env.USER ?? 'cli' }],
  });
  console.log(`${decision === 'approve' ? 'approved' : 'rejected'} ${callId} on ${runId}; run is now ${view.status} (turns=${view.turns} cost=$${view.costUsd.toFixed(6)})`);
  return 0;
}
