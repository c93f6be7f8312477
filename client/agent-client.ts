// AgentClient: the harness's runs through an @temporalio/client Client, typed
// as the contract has them. It starts runs (and resumes and forks of them,
// checked against their source first), finds them (a handle, or a list from
// visibility), and hands out AgentRunHandles (./run-handle.ts) that drive one.
import type { Client, WorkflowOptions } from '@temporalio/client';
import type { SearchAttributePair, TypedSearchAttributes } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE, type AgentInput, type AgentStatus } from '../common/contract.js';
import { startingAttributes } from '../workflows/visibility.js';
import { InvalidInputError, translating } from './agent-errors.js';
import { checkFork, checkForkInput, forkInput, sourceIdOf, type ForkSpec, type RunExport } from './fork-run.js';
import { checkInput, INPUT_NAMES, noLimitLeft, type OptionNames } from './input-check.js';
import { checkResume, resumeInput } from './resume-check.js';
import { AgentRunHandle, type AgentRunWorkflow, type HandleContext } from './run-handle.js';
import { summaryOf } from './run-summary.js';
import { offeredTools } from './offered-tools.js';
import { assertTemporalVersions, CLIENT_SDK_PACKAGES } from '../node/temporal-versions.js';
import { ACCEPT_WAIT_MS, ANSWER_WAIT_MS, queueWorkers, type QueueWorkers } from './worker-check.js';

/** How an AgentClient reaches the harness. */
export interface AgentClientOptions {
  /**
   * A connected Client on the runs' namespace. Give it the harness's data
   * converter (`agentDataConverter()`): large payloads (a long transcript's
   * query answer) are compressed by it.
   */
  client: Client;
  /** Where `start`, `resume` and `fork` start runs: a queue the harness's workers poll. Default `agent-harness`. */
  taskQueue?: string;
  /** How long a query or an update waits for a worker's answer before NoAnswerError, in ms. Default 20 000. */
  answerTimeoutMs?: number;
  /**
   * How long approve and reject wait for a worker to accept their `decide`
   * update (the run's validator passed, the update in its history) before
   * they record the decision as its signal instead (DecisionPendingError).
   * Default 5 000.
   */
  acceptTimeoutMs?: number;
  /** How refusals name the options at fault. Default INPUT_NAMES (`limits.maxTurns`); a command line passes its flags. */
  optionNames?: OptionNames;
}

/** Options of `start`: Temporal's workflow options, the workflow id required (it names the run), the task queue defaulted. */
export type AgentStartOptions = Omit<WorkflowOptions, 'workflowId' | 'taskQueue'> & {
  /** The run's name: stable across continue-as-new, in every trace line. */
  workflowId: string;
  /** Default: the AgentClient's. */
  taskQueue?: string;
};

/**
 * Options of `start` with a typed answer: `outputSchema` is a zod schema (zod
 * 4). It is sent as the input's `outputSchema` (its JSON Schema, by
 * `z.toJSONSchema`), and the handle's `result()` has `structuredOutput: T`,
 * parsed by the same zod schema (so its refinements, which JSON Schema cannot
 * say, are checked too).
 */
export type TypedStartOptions<T> = AgentStartOptions & {
  /** The final answer's schema; the input must not carry an `outputSchema` of its own. */
  outputSchema: z.ZodType<T>;
};

/** Start options of a run made from another one: its workflow id defaults to one derived from the source's. */
export type DerivedStartOptions = Omit<AgentStartOptions, 'workflowId'> & {
  /** Default: `<source>-resumed-<6 hex>` for a resume, `<source>-fork-<6 hex>` for a fork. */
  workflowId?: string;
};

/** What a resume changes of the stopped run. The limits count the totals, so a run stopped at a limit needs a higher one. */
export type ResumeOptions = DerivedStartOptions & {
  /** New limits (null lifts one; at least one must stay). */
  limits?: { maxTurns?: number | null; maxBudgetUsd?: number | null };
  /** A run that timed out on an approval asks again, waiting as long again unless this says otherwise (null: no limit). */
  approvalTimeoutMs?: number | null;
};

/** What a fork keeps of its source (`atTurn` turns, one execution of it) and sets on top (a message, a model, limits). */
export type ForkOptions = DerivedStartOptions & ForkSpec;

/** A run as visibility lists it: search attributes as of its last status change (exact once it has ended). */
export interface AgentRunSummary {
  /** The run's workflow id. */
  workflowId: string;
  /** The Temporal run id of the execution listed. */
  runId: string;
  /** Temporal's execution status (RUNNING, COMPLETED, …). */
  temporalStatus: string;
  /**
   * The AgentStatus search attribute; null for a run that has not set it.
   * An execution that Temporal closed while the attribute still said it was
   * live (a termination, a workflow timeout: the run itself could not record
   * it) shows what the server says: `terminated`, `timed_out`, `cancelled`
   * or `failed` (the attribute as the run last set it: `recordedAgentStatus`).
   */
  agentStatus: ListedAgentStatus | null;
  /** The AgentStatus search attribute as the run last set it. */
  recordedAgentStatus: AgentStatus | null;
  /** Turns so far (the AgentTurns search attribute); null if unset. */
  turns: number | null;
  /** Spent so far, in USD (AgentCostUsd); null if unset. */
  costUsd: number | null;
  /** The run's model (AgentModel); null if unset. */
  model: string | null;
  /** What a parked run waits on: the tool, the call, its argsHash. */
  awaiting: { toolName: string; callId: string | null; argsHash: string | null } | null;
  /** The task queue it runs on. */
  taskQueue: string;
  /** When the execution started. */
  startTime: Date;
  /** When it closed; null while it is open. */
  closeTime: Date | null;
}

/** Which runs `list` returns (all of them given together). */
export interface ListRunsOptions {
  /** Only runs parked on a person: awaiting an approval, a budget raise or a reconciliation. */
  awaiting?: boolean;
  /** Only runs with this status (as `agentStatus` shows it: `terminated` and `timed_out` from the server's execution status). */
  agentStatus?: ListedAgentStatus;
  /** Only runs that have cost at least this, in USD. */
  minCostUsd?: number;
  /** Only runs on this task queue. */
  taskQueue?: string;
  /** At most this many runs. */
  limit?: number;
}

/** Every state in which a run waits for a person: what `listAwaiting` finds. */
export const PARKED_ON_A_PERSON: readonly AgentStatus[] = ['awaiting_approval', 'awaiting_budget', 'awaiting_reconciliation'];

/** A run's status as `list` shows it: the run's own AgentStatus, or what the server says of an execution it closed from outside. */
export type ListedAgentStatus = AgentStatus | 'terminated' | 'timed_out' | 'cancelled';

/** Every AgentStatus (the record makes the compiler name one added to the type and missing here). */
const STATUS_SET: Record<AgentStatus, true> = {
  running: true,
  awaiting_approval: true,
  awaiting_budget: true,
  awaiting_reconciliation: true,
  waiting_for_model: true,
  waiting_for_tool: true,
  completed: true,
  failed: true,
  max_turns_exceeded: true,
  budget_exceeded: true,
  interrupted: true,
};

/** What `list` can filter on, every status it can show. */
export const LISTED_STATUSES: readonly ListedAgentStatus[] = [...(Object.keys(STATUS_SET) as AgentStatus[]), 'terminated', 'timed_out', 'cancelled'];

/** The statuses of a run that has not ended: an execution closed with one of them was closed from outside. */
const LIVE: ReadonlySet<string> = new Set<AgentStatus>(['running', ...PARKED_ON_A_PERSON, 'waiting_for_model', 'waiting_for_tool']);

/** Temporal's closing statuses that a run cannot record in its own AgentStatus, as `list` shows them, with their ExecutionStatus names in a query. */
const CLOSED_FROM_OUTSIDE: Record<string, { shown: ListedAgentStatus; query: string }> = {
  TERMINATED: { shown: 'terminated', query: 'Terminated' },
  TIMED_OUT: { shown: 'timed_out', query: 'TimedOut' },
  CANCELLED: { shown: 'cancelled', query: 'Canceled' },
  FAILED: { shown: 'failed', query: 'Failed' },
};

/** The status `list` shows: the run's own, unless the server closed the execution while the run said it was live. */
function shownStatus(recorded: AgentStatus | null, temporalStatus: string): ListedAgentStatus | null {
  const closed = CLOSED_FROM_OUTSIDE[temporalStatus];
  return closed !== undefined && (recorded === null || LIVE.has(recorded)) ? closed.shown : recorded;
}

/** The query clause for one listed status. */
function statusClause(status: ListedAgentStatus): string {
  const outside = Object.values(CLOSED_FROM_OUTSIDE).find((c) => c.shown === status && status !== 'failed');
  if (outside) return `ExecutionStatus = '${outside.query}'`;
  // A live status: only executions that are live (a terminated run's attribute still says running).
  return LIVE.has(status) ? `AgentStatus = '${status}' AND ExecutionStatus = 'Running'` : `AgentStatus = '${status}'`;
}

/**
 * The harness's runs, typed. Every name and payload is the contract's:
 * `agentRun` started on the task queue, the `decide`, `steer`,
 * `raiseBudget` and `reconcile` updates, the `approve`, `reject`, `steer`
 * and `cancel` signals, the `status`, `transcript` and `config` queries.
 */
export class AgentClient {
  /** The Temporal client it goes through. */
  readonly client: Client;
  /** Where it starts runs. */
  readonly taskQueue: string;
  private readonly ctx: HandleContext;
  private readonly names: OptionNames;

  /** A client of the runs on `options.client`'s namespace, starting them on `options.taskQueue`. */
  constructor(options: AgentClientOptions) {
    // An @temporalio version outside the peer range: one line now, not runs that hang later.
    assertTemporalVersions(CLIENT_SDK_PACKAGES);
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.ctx = { client: options.client, answerTimeoutMs: options.answerTimeoutMs ?? ANSWER_WAIT_MS, acceptTimeoutMs: options.acceptTimeoutMs ?? ACCEPT_WAIT_MS };
    this.names = options.optionNames ?? INPUT_NAMES;
  }

  /**
   * Starts an `agentRun` with this input. The input is checked first with
   * the workflow's own validation (InvalidInputError naming the field, and
   * no run); which tools exist is the worker's to say, so an unknown tool
   * fails the run (RunFailedError from `result()`). A run whose worker is
   * not polling yet waits on its queue: `handle.workers()` tells.
   */
  async start<T>(input: AgentInput, options: TypedStartOptions<T>): Promise<AgentRunHandle<T>>;
  /** Starts an `agentRun` with this input (see above); `structuredOutput` is `unknown`. */
  async start(input: AgentInput, options: AgentStartOptions): Promise<AgentRunHandle>;
  async start<T>(given: AgentInput, opts: AgentStartOptions | TypedStartOptions<T>): Promise<AgentRunHandle<T>> {
    const { outputSchema: typed, ...options } = opts as Partial<TypedStartOptions<T>> & AgentStartOptions;
    if (typed !== undefined && given.outputSchema !== undefined) {
      throw new InvalidInputError('invalid input: outputSchema is given twice (the input\'s JSON Schema and the start option\'s zod schema): give one', 'outputSchema');
    }
    const input: AgentInput = typed !== undefined ? { ...given, outputSchema: z.toJSONSchema(typed) as Record<string, unknown> } : given;
    if (!input.resumeFrom && !input.forkFrom) {
      checkInput(input, () => true, 'input', this.names);
      await this.checkTools(input, options.taskQueue ?? this.taskQueue);
    }
    const handle = await this.launch(input, options);
    return typed !== undefined ? handle.typedBy((v) => typed.parse(v)) : (handle as AgentRunHandle<T>);
  }

  /**
   * Tool names no worker of the queue offers, refused before the run starts
   * (InvalidInputError naming `tools`) when the queue's workers say which
   * tools they offer (./offered-tools.ts: the built-in set); otherwise the
   * run's first step refuses them.
   */
  private async checkTools(input: AgentInput, taskQueue: string): Promise<void> {
    if (!Array.isArray(input.tools) || input.tools.length === 0) return;
    const offered = await offeredTools(this.client, taskQueue).catch(() => null);
    if (offered === null) return;
    const unknown = input.tools.filter((t) => !offered.includes(t));
    if (unknown.length === 0) return;
    throw new InvalidInputError(
      `${this.names.name('tools')} names ${unknown.length === 1 ? 'an unknown tool' : 'unknown tools'} ${unknown.map((t) => JSON.stringify(t)).join(', ')}; the workers of task queue ${taskQueue} offer ${offered.join(', ')}`,
      'tools',
    );
  }

  /**
   * A handle on the run with this workflow id (its current execution, or run
   * `runId`), synchronous and lazy as Temporal's `client.workflow.getHandle`
   * is: nothing is asked of the server here, so a child agent's handle can be
   * taken before its parent starts it. The first call that needs the run
   * throws RunNotFoundError when the server does not know it (or it is not
   * an agentRun); a later call asks again, so the same handle works once the
   * run exists.
   */
  getHandle(workflowId: string, runId?: string): AgentRunHandle {
    const workflow = this.client.workflow.getHandle<AgentRunWorkflow>(workflowId, runId);
    return new AgentRunHandle(this.ctx, workflow, runId, null);
  }

  /**
   * Runs found through their search attributes, newest first. Visibility is
   * eventually consistent: a run parked a moment ago may show a moment later.
   */
  async *list(options: ListRunsOptions = {}): AsyncGenerator<AgentRunSummary> {
    const clauses = [`WorkflowType = 'agentRun'`];
    if (options.awaiting) clauses.push(`AgentStatus IN (${PARKED_ON_A_PERSON.map((st) => `'${st}'`).join(', ')}) AND ExecutionStatus = 'Running'`);
    if (options.agentStatus !== undefined) {
      if (!LISTED_STATUSES.includes(options.agentStatus)) throw new InvalidInputError(`agentStatus must be one of ${LISTED_STATUSES.join(', ')}, got ${JSON.stringify(options.agentStatus)}`, 'agentStatus');
      clauses.push(statusClause(options.agentStatus));
    }
    if (options.minCostUsd !== undefined) {
      if (!Number.isFinite(options.minCostUsd)) throw new InvalidInputError(`minCostUsd must be a number, got ${JSON.stringify(options.minCostUsd)}`, 'minCostUsd');
      clauses.push(`AgentCostUsd >= ${options.minCostUsd}`);
    }
    if (options.taskQueue !== undefined) clauses.push(`TaskQueue = '${options.taskQueue.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`);
    if (options.limit !== undefined && options.limit <= 0) return;
    // Newest first by start time. Visibility's own order is not that (SQL
    // stores list running executions first, then by close time) and they
    // refuse ORDER BY, so the runs are sorted here. Reading stops early when
    // that order makes it safe: past a closed execution, every later one
    // closed no later, so started no later; `limit` runs started at or after
    // its close time are then the newest.
    const found: AgentRunSummary[] = [];
    let lastClose = Infinity;
    let closeOrdered = true;
    for await (const w of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      const sa = (name: string) => w.searchAttributes?.[name]?.[0];
      const str = (name: string) => (sa(name) === undefined ? null : String(sa(name)));
      const num = (name: string) => (sa(name) === undefined ? null : Number(sa(name)));
      const tool = str('AgentAwaitingTool');
      const recorded = str('AgentStatus') as AgentStatus | null;
      found.push({
        workflowId: w.workflowId,
        runId: w.runId,
        temporalStatus: w.status.name,
        agentStatus: shownStatus(recorded, w.status.name),
        recordedAgentStatus: recorded,
        turns: num('AgentTurns'),
        costUsd: num('AgentCostUsd'),
        model: str('AgentModel'),
        awaiting: tool === null ? null : { toolName: tool, callId: str('AgentAwaitingCallId'), argsHash: str('AgentPendingArgsHash') },
        taskQueue: w.taskQueue,
        startTime: w.startTime,
        closeTime: w.closeTime ?? null,
      });
      const close = w.closeTime?.getTime();
      if (close === undefined) {
        // A live one after closed ones: not the order assumed; read everything.
        if (lastClose !== Infinity) closeOrdered = false;
        continue;
      }
      if (close > lastClose) closeOrdered = false;
      lastClose = close;
      if (closeOrdered && options.limit !== undefined && found.filter((r) => r.startTime.getTime() >= close).length >= options.limit) break;
    }
    found.sort((a, b) => b.startTime.getTime() - a.startTime.getTime() || (a.workflowId < b.workflowId ? -1 : 1));
    yield* options.limit === undefined ? found : found.slice(0, options.limit);
  }

  /** Every run parked on a person (an approval, a budget raise, a reconciliation), newest first: `list({ awaiting: true })` collected. */
  async listAwaiting(options: Omit<ListRunsOptions, 'awaiting' | 'agentStatus'> = {}): Promise<AgentRunSummary[]> {
    const out: AgentRunSummary[] = [];
    for await (const run of this.list({ ...options, awaiting: true })) out.push(run);
    return out;
  }

  /**
   * A new run continuing a stopped one (turn cap, budget, interrupted, a
   * provider outage): its transcript and totals carry on, pending calls
   * first. Refused before it starts, naming why: CannotResumeError (still
   * running, completed, failed for good), InvalidInputError (a limit not
   * raised, no limit left), RunNotFoundError. `handle.notes` says what the
   * new run will do again (ask for an approval nobody gave in time).
   */
  async resume(workflowId: string, options: ResumeOptions = {}): Promise<AgentRunHandle> {
    const { limits, approvalTimeoutMs, workflowId: id, ...start } = options;
    const set = { maxTurns: limits?.maxTurns, maxBudgetUsd: limits?.maxBudgetUsd, approvalTimeoutMs };
    if (set.maxTurns === null && set.maxBudgetUsd === null) throw new InvalidInputError(noLimitLeft(this.names), 'limits');
    const input = resumeInput(workflowId, set);
    const notes = await checkResume(this.client, workflowId, set, input, this.names);
    return this.launch(input, { ...start, workflowId: id ?? `${workflowId}-resumed-${randomUUID().slice(0, 6)}` }, notes);
  }

  /**
   * A new run from the first `atTurn` turns of a run (its workflow id) or of
   * an export (`handle.export()`): their tool results as recorded, no call of
   * those turns made again. Checked against the source first: a turn past
   * its end or not finished there, a configuration the workflow would refuse
   * (InvalidInputError), no such source (RunNotFoundError).
   */
  async fork(source: string | RunExport, options: ForkOptions): Promise<AgentRunHandle> {
    const { atTurn, runId, message, model, limits, workflowId, ...start } = options;
    const spec: ForkSpec = { atTurn, ...(runId !== undefined ? { runId } : {}), ...(message !== undefined ? { message } : {}), ...(model !== undefined ? { model } : {}), ...(limits !== undefined ? { limits } : {}) };
    const input = forkInput(source, spec);
    checkForkInput(source, spec, input, this.names);
    if (typeof source === 'string') await checkFork(this.client, source, spec, this.names);
    return this.launch(input, { ...start, workflowId: workflowId ?? `${sourceIdOf(source)}-fork-${randomUUID().slice(0, 6)}` });
  }

  /** Who polls a task queue's workflow tasks now (default: the client's): a run started there waits until one does. */
  workers(taskQueue: string = this.taskQueue): Promise<QueueWorkers> {
    return queueWorkers(this.client, taskQueue);
  }

  /** Starts the workflow: the task as the Web UI's summary, the starting search attributes set at once (they cost no upsert). */
  private async launch(input: AgentInput, options: AgentStartOptions, notes: readonly string[] = []): Promise<AgentRunHandle> {
    const { workflowId, taskQueue, staticSummary, typedSearchAttributes, ...rest } = options;
    const queue = taskQueue ?? this.taskQueue;
    const workflow = await translating(workflowId, undefined, () =>
      this.client.workflow.start<AgentRunWorkflow>('agentRun', {
        ...rest,
        taskQueue: queue,
        workflowId,
        args: [input],
        staticSummary: staticSummary ?? summaryOf(input),
        typedSearchAttributes: [...startingAttributes(input), ...pairsOf(typedSearchAttributes)],
      }),
    );
    return new AgentRunHandle(this.ctx, workflow, workflow.firstExecutionRunId, queue, notes);
  }
}

/** The caller's own search attributes, as pairs to add to the harness's. */
function pairsOf(attributes: SearchAttributePair[] | TypedSearchAttributes | undefined): SearchAttributePair[] {
  if (attributes === undefined) return [];
  return Array.isArray(attributes) ? attributes : attributes.getAll();
}
