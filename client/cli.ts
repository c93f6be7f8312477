// The harness's command line: run (start and follow), approve, reject,
// cancel, status, transcript, result, trace, list. A thin layer over
// AgentClient (./agent-client.ts): each command calls its method and prints
// the answer; exit codes tell the five exits apart (client/exit-codes.ts).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
// parseArgs that takes `--flag -3` as the flag's value, so its own check names it (./parse-flags.ts).
import { parseFlags as parseArgs } from './parse-flags.js';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { newKeyPair } from '../common/signed-decision.js';
import { privateKeyOf, type SigningOptions } from './signing.js';
import { readTrace, readTraceFile, traceChains } from '../node/trace-format.js';
import { isArgsHashText } from '../common/args-hash.js';
import { loadConfig, type ProcessConfig } from '../node/config.js';
import type { RunStatusView } from '../common/contract.js';
import { SUGGESTED_RAISE_CALLS, suggestedRaiseUsd } from '../common/budget-math.js';
import { AgentClient, LISTED_STATUSES, type ListedAgentStatus } from './agent-client.js';
import {
  AgentClientError,
  CannotResumeError,
  DecisionPendingError,
  InvalidInputError,
  NoAnswerError,
  NoWorkerError,
  RunAlreadyFinishedError,
  RunAlreadyStartedError,
  RunFailedError,
  RunNotFoundError,
  UpdateRefusedError,
} from './agent-errors.js';
import type { AgentRunHandle } from './run-handle.js';
import { connectClient } from './connect.js';
import { ALREADY_FINISHED, EXIT_CODES, NO_WORKER, NOT_FOUND, RECORDED_PENDING, USAGE_ERROR } from './exit-codes.js';
import { noWorkerLine } from './worker-check.js';
import { follow, followEvents } from './follow.js';
import { setHintTarget } from './render.js';
import { notTemporal, notTemporalService } from '../node/connection-errors.js';
import { traceDirOf, whereLooked } from './trace-dirs.js';
import { StreamOffsetError } from './run-events.js';
import { chainOfRun, latestChain } from './run-history.js';
import { COMMANDS, commandUsage, fullUsage } from './commands.js';
import { CLI_NAMES, inputFromFlags, numberFlag } from './run-flags.js';
import { resume, resumeArgs } from './resume.js';
import { startRun } from './start-run.js';
import { exportRun, forkArgs } from './fork-export.js';
import { CannotExportError } from './fork-run.js';
import { UsageError } from './usage-error.js';
import { codecServerCommand } from './codec-server-command.js';
import { auditCommand, opsCommand } from './ops-command.js';
import { approveByQuery, boundedQuery, QueryRefusedError } from './batch-decisions.js';

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
  let cfg: ProcessConfig;
  try {
    cfg = loadConfig();
  } catch (err) {
    // A bad setting (a profile that is not there, a missing TLS file) is one line naming it.
    console.error(`agent-harness: ${err instanceof Error ? err.message : String(err)}`);
    return USAGE_ERROR;
  }
  // The printed hints name the server and namespace in use (client/render.ts).
  setHintTarget({ address: cfg.temporalAddress ?? `127.0.0.1:${cfg.devServer.port}`, namespace: cfg.namespace });
  try {
    // Flags are checked before connecting: a mistyped limit is refused at once.
    const runFlags = command === 'run' ? inputFromFlags(rest) : null;
    const resuming = command === 'resume' ? resumeArgs(rest) : null;
    const fork = command === 'fork' ? forkArgs(rest) : null;
    // Connected only by the commands that need the server: reading a trace file does not.
    let connected: Client | undefined = client;
    const conn = async (): Promise<Client> => (connected ??= await connectClient(cfg));
    // Refusals name the CLI's flags, as the person typed them.
    const agent = async (): Promise<AgentClient> => new AgentClient({ client: await conn(), taskQueue: cfg.taskQueue, optionNames: CLI_NAMES });
    switch (command) {
      case 'keygen':
        return keygen(rest);
      case 'codec-server':
        return await codecServerCommand(rest, cfg.devServer.uiPort);
      case 'ops':
        return await opsCommand(rest, conn);
      case 'audit':
        return await auditCommand(rest, conn);
      case 'run':
        return await run(await agent(), runFlags ?? inputFromFlags(rest));
      case 'resume':
        return await resume(await agent(), resuming ?? resumeArgs(rest));
      case 'fork': {
        const f = fork ?? forkArgs(rest);
        const a = await agent();
        return await startRun(a, () => a.fork(f.source, { ...f.spec, ...(f.id !== undefined ? { workflowId: f.id } : {}) }), f.detach, `fork of ${f.from}`);
      }
      case 'export':
        return await exportRun(await agent(), rest);
      case 'approve':
      case 'reject':
        return await decide(await agent(), command, rest);
      case 'steer':
        return await steer(await agent(), rest);
      case 'raise-budget':
        return await raiseBudget(await agent(), rest);
      case 'reconcile':
        return await reconcile(await agent(), rest);
      case 'cancel': {
        const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { reason: { type: 'string' } } });
        const workflowId = need(positionals[0], 'workflowId');
        const handle = (await agent()).getHandle(workflowId);
        await handle.cancel(values.reason ?? 'cancelled from the CLI');
        // The signal is in the run's history either way; with no worker nothing stops yet: say so.
        const workers = await handle.workers();
        if (!workers.polling) {
          console.log(`cancel recorded for ${workflowId}, pending; it applies when a worker takes the run (${noWorkerLine(workers)})`);
          return RECORDED_PENDING;
        }
        console.log(`cancel sent to ${workflowId}`);
        return 0;
      }
      case 'status':
      case 'transcript':
        return await ask(await agent(), command, need(rest[0], 'workflowId'));
      case 'result': {
        const workflowId = need(rest[0], 'workflowId');
        const r = await (await agent()).getHandle(workflowId).result().catch((err: unknown) => {
          // A run that failed outright (bad input, a refused resume) has no result
          // object: print the same fields a failed result has, with the cause.
          if (!(err instanceof RunFailedError)) throw err;
          return { runId: workflowId, workflowId, status: 'failed', agentStatus: 'failed', reason: err.reason, error: err.reason, errorType: err.errorType } as const;
        });
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
        // What the worker wrote by default, wherever this runs (./trace-dirs.ts); TRACE_DIR wins.
        const traceDir = traceDirOf(workflowId);
        const chainId = await traceChainFor(conn, traceDir, workflowId, values['run-id'], values.follow === true);
        if (values.follow) {
          const handle = (await agent()).getHandle(workflowId, values['run-id']);
          const r = await follow(workflowId, () => handle.result(), { traceDir, chainId });
          return EXIT_CODES[r.status];
        }
        const lines = readTrace(traceDir, workflowId, chainId);
        if (lines.length === 0) console.error(`no trace for ${workflowId}${chainId ? ` run ${chainId}` : ''} ${whereLooked()}`);
        for (const l of lines) console.log(JSON.stringify(l));
        return lines.length ? 0 : NOT_FOUND;
      }
      case 'follow': {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { from: { type: 'string' }, tokens: { type: 'boolean' }, 'trace-file': { type: 'boolean' } },
        });
        const workflowId = need(positionals[0], 'workflowId');
        const from = values.from === undefined ? 0 : Number(values.from);
        if (!Number.isInteger(from) || from < 0) throw new UsageError(`--from must be a stream offset (a whole number of 0 or more), got ${JSON.stringify(values.from)}`);
        const handle = (await agent()).getHandle(workflowId);
        const r = await followEvents(handle, { traceDir: traceDirOf(workflowId), live: process.stdout.isTTY, fromOffset: from, tokens: values.tokens === true, traceFile: values['trace-file'] === true });
        if (r.output) console.log(`answer: ${r.output}`);
        if (r.structuredOutput !== undefined) console.log(`structuredOutput: ${JSON.stringify(r.structuredOutput)}`);
        if (r.error) console.log(`error: ${r.error}`);
        return EXIT_CODES[r.status];
      }
      case 'list':
        return await list(agent, rest);
      default:
        // Every command in COMMANDS has a case above.
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    // One line naming what is wrong, and where the command's usage is.
    if (err instanceof UsageError || err instanceof InvalidInputError || err instanceof CannotExportError) {
      console.error(`agent-harness ${command}: ${err.message} (see agent-harness ${command} --help)`);
      return USAGE_ERROR;
    }
    const parseError = argsError(err);
    if (parseError) {
      console.error(`agent-harness ${command}: ${parseError} (see agent-harness ${command} --help)`);
      return USAGE_ERROR;
    }
    if (err instanceof StreamOffsetError) {
      console.error(`agent-harness ${command}: ${err.message}`);
      return USAGE_ERROR;
    }
    if (err instanceof CannotResumeError || err instanceof RunAlreadyStartedError) {
      console.error(err.message);
      return 1;
    }
    if (err instanceof UpdateRefusedError) {
      console.error(`refused: ${err.reason}`);
      return 1;
    }
    if (err instanceof RunAlreadyFinishedError) {
      console.error(`the run has already finished: ${messageOf(err)}`);
      return ALREADY_FINISHED;
    }
    if (err instanceof RunNotFoundError) {
      console.error(`no such run: ${err.workflowId}`);
      return NOT_FOUND;
    }
    if (err instanceof NoWorkerError || err instanceof NoAnswerError) {
      console.error(err.message);
      return NO_WORKER;
    }
    // What reaches the server without AgentClient (the trace's run history) fails as the SDK says:
    // its "not found" for a run that has finished too is told apart by its words.
    const text = err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? '')}` : String(err);
    if (/already completed|already finished|workflow execution already/i.test(text)) {
      console.error(`the run has already finished: ${err instanceof Error ? err.message : String(err)}`);
      return ALREADY_FINISHED;
    }
    if (err instanceof WorkflowNotFoundError) {
      console.error(`no such run: ${err.workflowId ?? err.message}`);
      return NOT_FOUND;
    }
    // A gRPC server at the address that is not Temporal's: the SDK says only "Failed to describe workflow".
    const notTemporalWhat = notTemporalService(err);
    if (notTemporalWhat !== null) {
      console.error(`agent-harness: ${notTemporal(cfg.temporalAddress ?? `127.0.0.1:${cfg.devServer.port}`, cfg.temporalAddress ? cfg.temporalConnection.source : 'TEMPORAL_DEV_PORT', notTemporalWhat)}`);
      return USAGE_ERROR;
    }
    // Connection failures (one line from connectClient) and anything unforeseen.
    console.error(`agent-harness: ${messageOf(err)}`);
    return USAGE_ERROR;
  }
}

/** The message of the SDK's error under one of AgentClient's: the words the CLI has always printed. */
function messageOf(err: unknown): string {
  const e = err instanceof AgentClientError && err.cause instanceof Error ? err.cause : err;
  return e instanceof Error ? e.message : String(e);
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

const isListedStatus = (s: string): s is ListedAgentStatus => (LISTED_STATUSES as readonly string[]).includes(s);

/** Runs found through their search attributes (AgentClient.list), as a table with a header. */
async function list(agent: () => Promise<AgentClient>, rest: string[]): Promise<number> {
  const { values } = parseArgs({
    args: rest,
    options: { awaiting: { type: 'boolean' }, status: { type: 'string' }, 'min-cost': { type: 'string' }, limit: { type: 'string' } },
  });
  const status = values.status;
  if (status !== undefined && !isListedStatus(status)) {
    throw new UsageError(`--status must be one of ${LISTED_STATUSES.join(', ')}, got ${JSON.stringify(status)}`);
  }
  const minCost = numberFlag('min-cost', values['min-cost']);
  const limit = numberFlag('limit', values.limit, { integer: true }) ?? 50;
  const rows: string[][] = [['WORKFLOW ID', 'TEMPORAL', 'AGENT STATUS', 'TURNS', 'COST USD', 'AWAITING', 'STARTED']];
  const runs = (await agent()).list({ awaiting: values.awaiting === true, ...(status !== undefined ? { agentStatus: status } : {}), ...(typeof minCost === 'number' ? { minCostUsd: minCost } : {}), limit });
  for await (const w of runs) {
    const awaiting = w.awaiting ? `${w.awaiting.toolName} ${w.awaiting.callId ?? ''}` : '';
    rows.push([w.workflowId, w.temporalStatus, w.agentStatus ?? '', w.turns === null ? '' : String(w.turns), w.costUsd === null ? '' : w.costUsd.toFixed(6), awaiting, w.startTime.toISOString()]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
  return 0;
}

async function run(agent: AgentClient, flags: ReturnType<typeof inputFromFlags>): Promise<number> {
  const { input, id, detach } = flags;
  const workflowId = id ?? `run-${input.model ?? 'plan'}-${randomUUID().slice(0, 8)}`;
  return startRun(agent, () => agent.start(input, { workflowId }), detach, `run ${workflowId}`, { command: 'run', of: (field) => (field === 'tools' && flags.toolsFlag ? '--tools' : null) });
}

/**
 * --key FILE (a private key `keygen` wrote) and --expires-in-ms: the decision
 * is signed for AGENT_APPROVERS. Read and checked before anything is sent;
 * the key itself never leaves this process.
 */
function signingOf(values: { key?: string; 'expires-in-ms'?: string }): SigningOptions {
  if (values.key === undefined) {
    if (values['expires-in-ms'] !== undefined) throw new UsageError('--expires-in-ms needs --key FILE (it is the signature\'s lifetime)');
    return {};
  }
  let text: string;
  try {
    text = readFileSync(resolvePath(values.key), 'utf8');
  } catch (err) {
    throw new UsageError(`--key ${values.key}: ${(err as Error).message}`);
  }
  let key: Uint8Array;
  try {
    key = privateKeyOf(text);
  } catch (err) {
    throw new UsageError(`--key ${values.key}: ${(err as Error).message}`);
  }
  const ttl = numberFlag('expires-in-ms', values['expires-in-ms']);
  if (ttl === null || (ttl !== undefined && !(ttl > 0))) throw new UsageError('--expires-in-ms must be a number of ms > 0');
  return { key, ...(ttl !== undefined ? { expiresInMs: ttl } : {}) };
}

/** `keygen --out FILE [--name NAME]`: a new Ed25519 key pair; the private key to FILE (mode 600), the public key and a policy snippet to stdout. */
function keygen(rest: string[]): number {
  const { values } = parseArgs({ args: rest, allowPositionals: false, options: { out: { type: 'string' }, name: { type: 'string' }, force: { type: 'boolean' } } });
  const out = values.out;
  if (out === undefined) throw new UsageError('missing --out FILE (where the private key is written)');
  const path = resolvePath(out);
  if (existsSync(path) && values.force !== true) throw new UsageError(`${path} exists: a key file is never overwritten (--force to replace it)`);
  const name = values.name ?? process.env.USER ?? 'approver';
  const { privateKey, publicKey } = newKeyPair();
  writeFileSync(path, `# agent-harness Ed25519 private key of ${name}: keep it secret. Public key: ${publicKey}\n${privateKey}\n`, { mode: 0o600 });
  console.log(`private key written to ${path} (mode 600)`);
  console.log(`public key: ${publicKey}`);
  console.log('AGENT_APPROVERS policy snippet (list the tools this approver may decide):');
  console.log(JSON.stringify({ approvers: { [name]: publicKey }, tools: { delete_file: [name] } }, null, 2));
  return 0;
}

/** Who a command says decided: --by, else the login name. */
const byOf = (by: string | undefined): string => by ?? process.env.USER ?? 'cli';

/** A person's word on a write whose outcome is unknown: it happened (and what happened), or try it again. */
async function reconcile(agent: AgentClient, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { happened: { type: 'string' }, retry: { type: 'boolean' }, by: { type: 'string' }, key: { type: 'string' }, 'expires-in-ms': { type: 'string' } },
  });
  const workflowId = need(positionals[0], 'workflowId');
  const callId = need(positionals[1], 'callId');
  if ((values.happened === undefined) === (values.retry !== true)) throw new UsageError('reconcile takes one of --happened "what happened" and --retry');
  const by = byOf(values.by);
  const signing = signingOf(values);
  const outcome = values.happened !== undefined ? ({ outcome: 'happened', result: values.happened, by, ...signing } as const) : ({ outcome: 'retry', by, ...signing } as const);
  const handle = agent.getHandle(workflowId);
  const view = await viaWorker(handle, `reconcile ${callId}`, () => handle.reconcile(callId, outcome));
  if (typeof view === 'number') return view;
  console.log(`reconciled ${callId} on ${workflowId} (${outcome.outcome}); run is now ${view.agentStatus} (turns=${view.turns} cost=$${view.costUsd.toFixed(6)})`);
  return 0;
}

async function decide(agent: AgentClient, decision: 'approve' | 'reject', rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      reason: { type: 'string' },
      by: { type: 'string' },
      'args-hash': { type: 'string' },
      'call-key': { type: 'string' },
      tool: { type: 'string' },
      'when-worker-returns': { type: 'boolean' },
      key: { type: 'string' },
      'expires-in-ms': { type: 'string' },
      query: { type: 'string' },
      concurrency: { type: 'string' },
    },
  });
  if (values.query !== undefined) return decideByQuery(agent, decision, values, positionals);
  if (values.concurrency !== undefined) throw new UsageError('--concurrency goes with --query (a batch decision)');
  const workflowId = need(positionals[0], 'workflowId');
  const callId = need(positionals[1], 'callId');
  const hash = values['args-hash'];
  if (hash !== undefined && !isArgsHashText(hash)) throw new UsageError(`--args-hash must be 64 hex digits (the status's interruption.argsHash), got ${JSON.stringify(hash)}`);
  // The occurrence and tool the status shows: bind the decision to them, and let --key sign with no worker to ask.
  const bound = {
    ...(values['call-key'] !== undefined ? { callKey: values['call-key'] } : {}),
    ...(values.tool !== undefined ? { toolName: values.tool } : {}),
  };
  const options = { by: byOf(values.by), ...(values.reason !== undefined ? { reason: values.reason } : {}), ...(hash !== undefined ? { argsHash: hash.toLowerCase() } : {}), ...bound, ...signingOf(values) };
  const handle = agent.getHandle(workflowId);
  const view = await viaWorker(handle, `${decision} ${callId}`, () => (decision === 'approve' ? handle.approve(callId, options) : handle.reject(callId, options)), {
    name: decision,
    // The signals carry the same fields, the verdict in the signal's name (approve has no reason).
    send: () => (decision === 'approve' ? handle.signals.approve(callId, { by: options.by, ...(options.argsHash !== undefined ? { argsHash: options.argsHash } : {}), ...bound, ...signingOf(values) }) : handle.signals.reject(callId, options)),
    requested: values['when-worker-returns'] === true,
  });
  if (typeof view === 'number') return view;
  console.log(`${decision === 'approve' ? 'approved' : 'rejected'} ${callId} on ${workflowId}; run is now ${view.status} (turns=${view.turns} cost=$${view.costUsd.toFixed(6)})`);
  return 0;
}

/**
 * `approve --query Q --by NAME [--key FILE]`: every run the visibility query
 * names that is parked on an approval, each by its own decide update (signed
 * per run with --key). Exit 0 when every matched run was approved, 1 when any
 * was refused or not sent (each listed with why).
 */
async function decideByQuery(
  agent: AgentClient,
  decision: 'approve' | 'reject',
  values: { query?: string; by?: string; key?: string; 'expires-in-ms'?: string; concurrency?: string; reason?: string; 'args-hash'?: string; 'call-key'?: string; tool?: string; 'when-worker-returns'?: boolean },
  positionals: string[],
): Promise<number> {
  if (decision !== 'approve') throw new UsageError('--query is for approve only: a batch rejection has no reason per call; reject runs one by one');
  if (positionals.length) throw new UsageError(`--query names the runs: give no workflowId or callId (got ${positionals.join(' ')})`);
  for (const flag of ['args-hash', 'call-key', 'tool', 'when-worker-returns'] as const) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} does not go with --query: each run's own parked call is read from its search attributes`);
  }
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000)) throw new UsageError(`--concurrency must be a whole number from 1 to 1000, got ${JSON.stringify(values.concurrency)}`);
  try {
    boundedQuery(values.query ?? '');
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const outcome = await approveByQuery(agent.client, { query: values.query ?? '', by: byOf(values.by), ...signingOf(values), ...(concurrency !== undefined ? { concurrency } : {}) }).catch((err: unknown) => {
    // The person's query is what is wrong: a usage error, as an empty one is.
    throw err instanceof QueryRefusedError ? new UsageError(`--query: ${err.message}`) : err;
  });
  for (const r of outcome.runs) if (r.result !== 'approved') console.log(`${r.result.replace('_', ' ')}: ${r.workflowId}${r.callId ? ` ${r.callId}` : ''}: ${r.reason ?? ''}`);
  console.log(`approved ${outcome.approved} of ${outcome.matched} parked run${outcome.matched === 1 ? '' : 's'} matching the query (${outcome.pending} recorded pending, ${outcome.refused} refused, ${outcome.notSent} not sent)`);
  if (outcome.matched === 0) {
    console.log('no run parked on an approval matches the query: nothing was decided');
    return 1;
  }
  if (outcome.approved === outcome.matched) return 0;
  // Only pending ones left: recorded, as a single approve's exit 9 says.
  return outcome.approved + outcome.pending === outcome.matched ? RECORDED_PENDING : 1;
}

/** `steer RUN "message"`: queued by the steer update (refused at once, naming why, when the run cannot take it). */
async function steer(agent: AgentClient, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { by: { type: 'string' }, interrupt: { type: 'boolean' }, 'when-worker-returns': { type: 'boolean' }, key: { type: 'string' }, 'expires-in-ms': { type: 'string' } } });
  const workflowId = need(positionals[0], 'workflowId');
  const message = positionals[1];
  if (message === undefined) throw new UsageError('missing <message>');
  if (positionals.length > 2) throw new UsageError(`one message, quoted: got ${positionals.length - 1} words (agent-harness steer ${workflowId} "look in logs/")`);
  if (message.trim() === '') throw new UsageError('the message is empty');
  const options = { by: byOf(values.by), interrupt: values.interrupt === true, ...signingOf(values) };
  const handle = agent.getHandle(workflowId);
  const view = await viaWorker(handle, 'the message', () => handle.steer(message, options), {
    name: 'steer',
    send: () => handle.signals.steer(message, options),
    requested: values['when-worker-returns'] === true,
  });
  if (typeof view === 'number') return view;
  const queued = view.queuedSteers.length;
  const declined = view.declinedByInterrupt ? `; it declines the parked ${view.declinedByInterrupt.toolName} call ${view.declinedByInterrupt.callId}` : '';
  const when = values.interrupt ? `calls not yet run are declined with it${declined}; the model reads it at the next turn boundary` : 'the model reads it at the next turn boundary';
  console.log(`message queued for ${workflowId} (${queued} queued): ${when}; run is ${view.agentStatus} (turns=${view.turns})`);
  return 0;
}

/** `raise-budget RUN --to USD`: the raiseBudget update; a refusal (not higher, a soft budget, a child) prints its reason and exits 1. */
async function raiseBudget(agent: AgentClient, rest: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { to: { type: 'string' }, by: { type: 'string' }, reason: { type: 'string' }, key: { type: 'string' }, 'expires-in-ms': { type: 'string' } } });
  const workflowId = need(positionals[0], 'workflowId');
  const to = numberFlag('to', values.to);
  if (to === undefined || to === null) throw new UsageError('missing --to USD (the new budget)');
  const handle = agent.getHandle(workflowId);
  const view = await viaWorker(handle, `the raise to $${to}`, () => handle.raiseBudget(to, { by: byOf(values.by), ...(values.reason !== undefined ? { reason: values.reason } : {}), ...signingOf(values) }));
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
 * An update through AgentClient, which sends it only when a worker polls the
 * run's queue and waits a bounded time for the answer: with no worker it is
 * not sent (an update the server held would apply whenever a worker came
 * back, behind the operator's back) unless `durable` is requested
 * (--when-worker-returns): then the signal of the same name is sent instead,
 * and said to be recorded. Returns the update's answer or the exit code.
 */
async function viaWorker(handle: AgentRunHandle, what: string, update: () => Promise<RunStatusView>, durable: DurableForm | null = null): Promise<RunStatusView | number> {
  const { workflowId } = handle;
  try {
    return await update();
  } catch (err) {
    if (err instanceof NoWorkerError) {
      if (durable?.requested) {
        await durable.send();
        console.log(`recorded ${what} for ${workflowId} as the ${durable.name} signal, pending; it applies when a worker takes the run (${noWorkerLine(err.workers)})`);
        return RECORDED_PENDING;
      }
      const signalFlag = durable ? '; or pass --when-worker-returns to record it now, applied when a worker takes the run' : '';
      console.error(`not sent: ${noWorkerLine(err.workers)}, so ${what} was not sent to ${workflowId}; start a worker on ${err.workers.taskQueue} and try again${signalFlag}`);
      return NO_WORKER;
    }
    if (err instanceof DecisionPendingError) {
      // Definite: in the run's history, and of its two forms one decision at most applies.
      console.log(err.message);
      return RECORDED_PENDING;
    }
    if (err instanceof NoAnswerError) {
      console.error(
        `sent ${what} to ${workflowId}, but no worker answered within ${err.waitedMs / 1000} s (task queue ${err.taskQueue}); ` +
          `it may still apply when a worker takes the run: check with agent-harness status ${workflowId}`,
      );
      return NO_WORKER;
    }
    throw err;
  }
}

/**
 * `status` and `transcript`: the run's query, when a worker polls its queue
 * and answers in time. Otherwise one line saying so and, for status, what
 * Temporal itself holds for the run (execution status, search attributes).
 */
async function ask(agent: AgentClient, command: 'status' | 'transcript', workflowId: string): Promise<number> {
  const handle = agent.getHandle(workflowId);
  try {
    const answer = command === 'status' ? await handle.status() : await handle.transcript();
    console.log(JSON.stringify(answer, null, 2));
    return 0;
  } catch (err) {
    if (err instanceof NoWorkerError) console.error(noWorkerLine(err.workers));
    else if (err instanceof NoAnswerError) console.error(`no worker answered the ${command} query within ${err.waitedMs / 1000} s (task queue ${err.taskQueue})`);
    else throw err;
  }
  if (command === 'status') {
    console.error('what Temporal holds for the run without a worker (search attributes as of its last status change):');
    console.log(JSON.stringify(await handle.describe(), null, 2));
  }
  return NO_WORKER;
}
