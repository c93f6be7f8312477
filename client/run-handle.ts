// One agent run as a caller drives it: its queries, its decisions (by the
// `decide` update, so the caller gets the run's answer or the refusal's
// reason), steering, budget raises, reconciliation and Stop, each typed as
// the contract has it (common/run-messages.ts), with the SDK's errors as
// ours (./agent-errors.ts). A query or an update needs a worker: with none
// polling the run's queue nothing is sent (NoWorkerError), and an answer is
// waited for a bounded time (NoAnswerError), so no call hangs on a worker
// that is not there.
import { WorkflowUpdateStage, type Client, type WorkflowHandle } from '@temporalio/client';
import { AGENT_RUN_FAILED, type AgentInput, type ChatMessage, type RunConfig, type RunResult, type RunStatusView } from '../common/contract.js';
import {
  approveSignal,
  cancelSignal,
  configQuery,
  decideUpdate,
  raiseBudgetUpdate,
  reconcileUpdate,
  rejectSignal,
  statusQuery,
  streamItemsQuery,
  steerSignal,
  steerUpdate,
  transcriptQuery,
  type DecideInput,
  type ReconcileInput,
  type SteerInput,
  type DecisionSignature,
} from '../common/run-messages.js';
import { signCall, signOther, type SigningOptions } from './signing.js';
import { DecisionPendingError, NoAnswerError, NoWorkerError, RunFailedError, RunNotFoundError, translating } from './agent-errors.js';
import { ApplicationFailure } from '@temporalio/common';
import { exportOf, type RunExport } from './fork-run.js';
import { runEvents, type EventsOptions } from './run-events.js';
import type { RunEventItem } from '../common/stream-items.js';
import { boundedAnswer, queueWorkers, withoutWorker, type QueueWorkers, type RunDescription } from './worker-check.js';

/** The `agentRun` workflow's signature, as a client sees it: so handles and results are typed without the workflow's code. */
export type AgentRunWorkflow = (input: AgentInput) => Promise<RunResult>;

/** Who approves, and what binds the approval. */
export interface ApproveOptions extends SigningOptions {
  /** Who decided: written with the decision into the trace. */
  by: string;
  /** The call's argsHash (status `interruption.argsHash`): refused unless the awaited call has exactly those arguments. */
  argsHash?: string;
  /**
   * The call's occurrence (status `interruption.callKey`): refused unless the
   * awaited call is that one (a model may use a call id twice). With a key,
   * what is signed; read from the status when not given.
   */
  callKey?: string;
  /** With a key: the call's tool, as signed (read from the status when not given). */
  toolName?: string;
  /** Kept with the decision in the trace (the model reads a rejection's reason, not an approval's). */
  reason?: string;
}

/** Who rejects, and why. */
export interface RejectOptions extends SigningOptions {
  /** Who decided. */
  by: string;
  /** Why: written into the transcript, so the model reads it. */
  reason?: string;
  /** As for approve: refused unless the awaited call has exactly those arguments. */
  argsHash?: string;
  /** As for approve: refused unless the awaited call is this occurrence. */
  callKey?: string;
  /** As for approve. */
  toolName?: string;
}

/** Who steers, and how. */
export interface SteerOptions extends SigningOptions {
  /** Who sent the message: the model reads it with the message. */
  by: string;
  /** Calls of the current reply that have not started, and a call parked on an approval, are declined with the message as the reason. */
  interrupt?: boolean;
}

/** A budget raise's author and reason. */
export interface RaiseBudgetOptions extends SigningOptions {
  /** Who raised it. */
  by: string;
  /** Why, for the trace and the status's `budget.raises`. */
  reason?: string;
}

/** A person's word on a write whose outcome is unknown: it happened (and what happened, for the model), or try it again. */
export type ReconcileOptions = { by: string } & SigningOptions & ({ outcome: 'happened'; result: string } | { outcome: 'retry' });

/**
 * A decision or a message sent as its signal: recorded in the run's history
 * whether or not a worker polls, applied when a worker takes the run (or
 * ignored, and traced `signal_ignored`). No answer and no refusal reach the
 * caller: use the handle's methods for those.
 */
export interface AgentRunSignals {
  /** The `approve` signal. */
  approve(callId: string, options: ApproveOptions): Promise<void>;
  /** The `reject` signal. */
  reject(callId: string, options: RejectOptions): Promise<void>;
  /** The `steer` signal. */
  steer(message: string, options: SteerOptions): Promise<void>;
}

/**
 * What a handle needs of the AgentClient that made it.
 *
 * @internal
 */
export interface HandleContext {
  /** The Temporal client the handle goes through. */
  client: Client;
  /** How long a query or an update waits for a worker's answer, in ms (AgentClientOptions.answerTimeoutMs). */
  answerTimeoutMs: number;
  /** How long a decision waits for a worker to accept its update before it is recorded as its signal. */
  acceptTimeoutMs: number;
}

/**
 * A handle on one agent run (a workflow id), from AgentClient's `start`,
 * `getHandle`, `resume` or `fork`. Signals and updates go to the workflow
 * id's current execution unless the handle was made for one run id.
 */
export class AgentRunHandle<T = unknown> {
  /** Reads a result's structuredOutput as T (AgentClient.start with a zod outputSchema); absent: as it came. */
  private parseOutput: ((v: unknown) => T) | null = null;

  /** The workflow id: the run's name, stable across continue-as-new (published as `runId` in results and status). */
  readonly workflowId: string;
  /**
   * The Temporal run id this handle is bound to: the first execution of a run
   * it started (its result follows continue-as-new from there), or the one
   * given to getHandle; undefined: the workflow id's current execution.
   */
  readonly runId: string | undefined;
  /** The raw Temporal handle, typed: for what AgentClient does not wrap (describe, fetchHistory, terminate, …). */
  readonly workflow: WorkflowHandle<AgentRunWorkflow>;
  /** What the client noticed as it started this run (a resume that will ask again for an approval nobody gave in time); empty otherwise. */
  readonly notes: readonly string[];
  /** The fire-and-forget forms of approve, reject and steer. */
  readonly signals: AgentRunSignals;

  /**
   * Made by AgentClient: use its `start`, `getHandle`, `resume` or `fork`.
   *
   * @internal
   */
  constructor(
    private readonly ctx: HandleContext,
    workflow: WorkflowHandle<AgentRunWorkflow>,
    runId: string | undefined,
    /** The run's task queue, where its worker polls; null: not known yet (a lazy getHandle), read from the server on first use. */
    taskQueue: string | null,
    notes: readonly string[] = [],
  ) {
    this.workflow = workflow;
    this.workflowId = workflow.workflowId;
    this.runId = runId;
    this.notes = notes;
    if (taskQueue !== null) this.queue = Promise.resolve(taskQueue);
    const send = async <A>(call: () => Promise<A>) => {
      await this.taskQueue();
      return translating(this.workflowId, this.runId, call);
    };
    this.signals = {
      approve: async (callId, o) => {
        const signed = await this.signedCall(callId, 'approve', o);
        return send(() => workflow.signal(approveSignal, { callId, by: o.by, ...(o.argsHash !== undefined ? { argsHash: o.argsHash } : {}), ...signed }));
      },
      reject: async (callId, o) => {
        const signed = await this.signedCall(callId, 'reject', o);
        return send(() =>
          workflow.signal(rejectSignal, { callId, by: o.by, ...(o.argsHash !== undefined ? { argsHash: o.argsHash } : {}), ...(o.reason !== undefined ? { reason: o.reason } : {}), ...signed }),
        );
      },
      steer: async (message, o) => {
        const input = await this.signedSteer(message, o);
        return send(() => workflow.signal(steerSignal, input));
      },
    };
  }

  /** The `status` query: turns, cost, what the run waits for (`interruption`, with the parked call's argsHash), queued messages. */
  status(): Promise<RunStatusView> {
    return this.ask('status', () => this.workflow.query(statusQuery));
  }

  /** The `transcript` query: the run's messages, as the model reads them. */
  transcript(): Promise<ChatMessage[]> {
    return this.ask('transcript', () => this.workflow.query(transcriptQuery));
  }

  /** The `config` query: the run's resolved configuration, every default filled in. */
  config(): Promise<RunConfig> {
    return this.ask('config', () => this.workflow.query(configQuery));
  }

  /**
   * Waits for the run's end (following continue-as-new) and returns its
   * result: one of the five exits, `failed` included. Throws RunFailedError
   * when the run failed as a workflow (bad input, a refused resume, a
   * termination) and so has no result.
   */
  async result(): Promise<RunResult<T>> {
    await this.taskQueue();
    let r: RunResult;
    try {
      r = await translating(this.workflowId, this.runId, () => this.workflow.result());
    } catch (err) {
      // A worker with failedRunsFailWorkflow fails the workflow of a failed run, its result in the failure's details: the same result.
      const carried = err instanceof RunFailedError && err.errorType === AGENT_RUN_FAILED ? resultOf(err) : null;
      if (!carried) throw err;
      r = carried;
    }
    // The workflow checked the value against the JSON Schema; the caller's zod schema reads it as T (and checks what JSON Schema cannot say).
    if (this.parseOutput && r.structuredOutput !== undefined) return { ...r, structuredOutput: this.parseOutput(r.structuredOutput) };
    return r as RunResult<T>;
  }

  /**
   * This handle, its result's structuredOutput read by `parse` (AgentClient.start with a zod outputSchema).
   *
   * @internal
   */
  typedBy<U>(parse: (v: unknown) => U): AgentRunHandle<U> {
    const typed = this as unknown as AgentRunHandle<U>;
    typed.parseOutput = parse;
    return typed;
  }

  /** What Temporal holds for the run without a worker: its execution status and Agent* search attributes. */
  async describe(): Promise<RunDescription> {
    await this.taskQueue();
    return withoutWorker(await translating(this.workflowId, this.runId, () => this.workflow.describe()));
  }

  /**
   * Approves the parked call `callId` by the `decide` update: resolves once
   * the run has taken the decision, with its status. Throws
   * UpdateRefusedError with the run's reason when `callId` is not awaiting a
   * decision (or the argsHash names other arguments, or a Stop came first),
   * NoWorkerError (no worker polls: not sent, nothing applies later) or
   * DecisionPendingError (a worker seemed to poll but none took the update
   * within `acceptTimeoutMs`: recorded as the `approve` signal, pending). Never
   * "maybe": see `decision` below.
   */
  async approve(callId: string, options: ApproveOptions): Promise<RunStatusView> {
    const input: DecideInput = { callId, decision: 'approve', by: options.by, ...optional(options), ...(await this.signedCall(callId, 'approve', options)) };
    return this.decision(input);
  }

  /** Rejects the parked call `callId` by the `decide` update; the reason is written into the transcript. Throws as approve. */
  async reject(callId: string, options: RejectOptions): Promise<RunStatusView> {
    const input: DecideInput = { callId, decision: 'reject', by: options.by, ...optional(options), ...(await this.signedCall(callId, 'reject', options)) };
    return this.decision(input);
  }

  /**
   * Queues a message by the `steer` update: the model reads it at the next
   * turn boundary. Resolves once it is queued (its place shows in
   * `queuedSteers`), not when the model has read it. Refused (an empty
   * message, a run that is stopping) with UpdateRefusedError.
   */
  async steer(message: string, options: SteerOptions): Promise<RunStatusView> {
    const input = await this.signedSteer(message, options);
    return this.update('steer', () => this.workflow.executeUpdate(steerUpdate, { args: [input] }));
  }

  /**
   * A hard budget's new amount, by the `raiseBudget` update: a run parked
   * `awaiting_budget` goes on if it pays for the next call. Refused unless
   * higher than the budget now (and for soft budgets and sub-agents).
   */
  async raiseBudget(maxBudgetUsd: number, options: RaiseBudgetOptions): Promise<RunStatusView> {
    const plain = { maxBudgetUsd, by: options.by, ...(options.reason !== undefined ? { reason: options.reason } : {}) };
    const input =
      options.key === undefined ? plain : signOther(plain, { workflowId: this.workflowId, decision: 'raiseBudget', by: options.by, callKey: await this.runKey(), key: options.key, expiresInMs: options.expiresInMs });
    return this.update('raiseBudget', () => this.workflow.executeUpdate(raiseBudgetUpdate, { args: [input] }));
  }

  /** A person's word on the write `callId` whose outcome is unknown (a run parked `awaiting_reconciliation`), by the `reconcile` update. */
  async reconcile(callId: string, options: ReconcileOptions): Promise<RunStatusView> {
    const plain: ReconcileInput = options.outcome === 'happened' ? { callId, outcome: 'happened', result: options.result, by: options.by } : { callId, outcome: 'retry', by: options.by };
    let input: ReconcileInput = plain;
    if (options.key !== undefined) {
      // Signed for this parking of this call: the status names its occurrence and tool.
      const parked = (await this.status()).interruption;
      if (parked?.type !== 'reconciliation' || parked.callId !== callId) throw new Error(`cannot sign the reconciliation of ${callId}: it is not the call the run is parked on`);
      if (parked.callKey === undefined) throw new Error(`cannot sign the reconciliation of ${callId}: the run's status names no callKey`);
      input = signOther(plain, { workflowId: this.workflowId, decision: 'reconcile', callId, callKey: parked.callKey, toolName: parked.toolName, by: options.by, key: options.key, expiresInMs: options.expiresInMs });
    }
    return this.update('reconcile', () => this.workflow.executeUpdate(reconcileUpdate, { args: [input] }));
  }

  /**
   * Stops the run by the `cancel` signal: it ends `interrupted` (interruption
   * `cancelled` with this reason), cancelling its running tool or model call
   * and its child runs. Resolves once the signal is recorded; `result()`
   * gives the exit. RunAlreadyFinishedError if it has ended.
   */
  async cancel(reason = 'cancelled through AgentClient'): Promise<void> {
    await this.taskQueue();
    return translating(this.workflowId, this.runId, () => this.workflow.signal(cancelSignal, { reason }));
  }

  /** The run's turns, configuration and cost per turn, to fork from later (AgentClient.fork) even once its history is gone. */
  async export(): Promise<RunExport> {
    await this.taskQueue();
    return exportOf(this.ctx.client, this.workflowId, this.runId, this);
  }

  /**
   * The run's live stream (topic `events`): every trace event, the model's
   * text as it arrives (`token` items, ended by `token_end`) and tool
   * progress, from `fromOffset` (each item carries its offset: pass the last
   * one's plus one to reconnect). Every item from that offset, in order, with
   * contiguous offsets, however far behind: what the live window no longer
   * holds is read back from the run's earlier executions (a worker replays
   * their history to answer); an item that truly cannot be had is a `gap`
   * item naming its offsets. Follows continue-as-new; ends when the run ends
   * (with run_stopped). An offset past the stream's end is refused
   * (StreamOffsetError). Each poll at the live end is an update (one Action).
   */
  async *events(fromOffset = 0, options: EventsOptions = {}): AsyncGenerator<RunEventItem, void, undefined> {
    const windowOf = (from: number, runId?: string, maxItems?: number) =>
      this.ask('the stream window', () => this.ctx.client.workflow.getHandle(this.workflowId, runId).query(streamItemsQuery, from, ...(maxItems === undefined ? [] : [maxItems])));
    await this.taskQueue();
    yield* runEvents(this.ctx.client, this.workflowId, fromOffset, await this.streamEnd(fromOffset), windowOf, options);
  }

  /** Who polls the run's task queue now. */
  async workers(): Promise<QueueWorkers> {
    return queueWorkers(this.ctx.client, await this.taskQueue());
  }

  /** The run's task queue once the server has said the run exists and is an agentRun; a refusal is not kept, so a later call asks again. */
  private queue: Promise<string> | undefined;
  private taskQueue(): Promise<string> {
    this.queue ??= translating(this.workflowId, this.runId, () => this.workflow.describe()).then(
      (d) => {
        if (d.type !== 'agentRun') throw new RunNotFoundError(this.workflowId, this.runId, { detail: `it is a ${d.type} workflow, not an agentRun` });
        return d.taskQueue;
      },
    );
    const asked = this.queue;
    // Not found yet (a child its parent has not started): the next call asks the server again.
    asked.catch(() => {
      if (this.queue === asked) this.queue = undefined;
    });
    return asked;
  }

  /**
   * The signature fields for a decision on a call, when the options carry a
   * key: over the call's argsHash, callKey and tool (the given ones, else the
   * parked call's from the status query). Without a key: the callKey given,
   * which binds an unsigned decision to that occurrence, or nothing.
   */
  private async signedCall(callId: string, decision: 'approve' | 'reject', o: ApproveOptions | RejectOptions): Promise<DecisionSignature> {
    if (o.key === undefined) return { ...(o.callKey !== undefined ? { callKey: o.callKey } : {}), ...(o.toolName !== undefined ? { toolName: o.toolName } : {}) };
    let { argsHash: hash, callKey, toolName } = o;
    if (hash === undefined || callKey === undefined || toolName === undefined) {
      const status = await this.status().catch((err: unknown) => {
        throw new Error(`cannot sign the ${decision} of ${callId} without the run's status (${(err as Error).message}): pass argsHash, callKey and toolName (agent-harness: --args-hash, --call-key, --tool)`, { cause: err });
      });
      const parked = status.interruption;
      if (parked?.type !== 'approval' || parked.callId !== callId) throw new Error(`cannot sign the ${decision} of ${callId}: it is not the call the run is parked on; pass argsHash, callKey and toolName (the status query's interruption)`);
      if (parked.callKey === undefined) throw new Error(`cannot sign the ${decision} of ${callId}: the run's status names no callKey; pass callKey`);
      hash ??= parked.argsHash;
      callKey ??= parked.callKey;
      toolName ??= parked.toolName;
    }
    return signCall({ workflowId: this.workflowId, callId, callKey, toolName, decision, argsHash: hash, by: o.by, key: o.key, expiresInMs: o.expiresInMs });
  }

  private async signedSteer(message: string, o: SteerOptions): Promise<SteerInput> {
    const plain = steerInput(message, o);
    return o.key === undefined ? plain : signOther(plain, { workflowId: this.workflowId, decision: 'steer', by: o.by, callKey: await this.runKey(), key: o.key, expiresInMs: o.expiresInMs });
  }

  /**
   * The run chain a signed steer or raiseBudget is bound to:
   * `<workflowId>@<first execution's run id>`, as the status query's runKey
   * says. Read from the server (no worker needed, so a signed steer can wait
   * in history for one), of the execution this handle names.
   */
  private async runKey(): Promise<string> {
    const d = await translating(this.workflowId, this.runId, () => this.workflow.describe());
    const first = d.raw.workflowExecutionInfo?.firstRunId;
    // A server too old to say: the execution's own run id is the chain's first unless it continued as new.
    return `${this.workflowId}@${first !== undefined && first !== null && first !== '' ? first : d.runId}`;
  }

  /** The stream's end offset, asked only when it could refuse `fromOffset` and a worker is there to answer; undefined otherwise. */
  private async streamEnd(fromOffset: number): Promise<number | undefined> {
    if (fromOffset === 0) return undefined;
    try {
      return await this.ask('the stream offset', () => this.workflow.query<number>('__temporal_workflow_stream_offset'));
    } catch {
      // No worker, or a run that has ended: the stream itself says what there is.
      return undefined;
    }
  }

  /** A query, sent only when a worker polls the run's queue, its answer waited for a bounded time. */
  private async ask<T>(what: string, query: () => Promise<T>): Promise<T> {
    const workers = await this.workers();
    if (!workers.polling) throw new NoWorkerError(this.workflowId, what, workers);
    return this.answered(what, workers, query);
  }

  /**
   * An update, sent only when a worker polls the run's queue (an update the
   * server held would apply whenever a worker came back, unseen by the
   * caller). A run that has ended gets it anyway: the server refuses it at
   * once (RunAlreadyFinishedError).
   */
  private async update<T>(what: string, call: () => Promise<T>): Promise<T> {
    await this.taskQueue();
    const d = await translating(this.workflowId, this.runId, () => this.workflow.describe());
    if (d.status.name !== 'RUNNING') return translating(this.workflowId, this.runId, call, what);
    const workers = await queueWorkers(this.ctx.client, d.taskQueue);
    if (!workers.polling) throw new NoWorkerError(this.workflowId, what, workers);
    return this.answered(what, workers, call);
  }

  /**
   * A decision by the `decide` update, with one definite outcome when no
   * worker takes it. The update is sent waiting for the ACCEPTED stage only
   * (the run's validator passed and the update is in its history), for
   * `acceptTimeoutMs`. Not accepted in time (a worker just killed still
   * listed as a poller, a stuck one): the update was at most admitted, which
   * the server keeps in memory only and which is not in history, so the same
   * decision is sent as its signal, which is durable, and the caller gets
   * DecisionPendingError ("recorded, pending"). Should the admitted update
   * reach the run after all, the run takes whichever of the two comes first
   * and refuses the other (a decision pending or taken for the call: the
   * first decision is final), so one decision applies, never two. Both carry
   * the same fields and the same signature.
   */
  private async decision(input: DecideInput): Promise<RunStatusView> {
    const what = `${input.decision} ${input.callId}`;
    await this.taskQueue();
    const d = await translating(this.workflowId, this.runId, () => this.workflow.describe());
    if (d.status.name !== 'RUNNING') return translating(this.workflowId, this.runId, () => this.workflow.executeUpdate(decideUpdate, { args: [input] }), 'decide');
    const workers = await queueWorkers(this.ctx.client, d.taskQueue);
    if (!workers.polling) throw new NoWorkerError(this.workflowId, 'decide', workers);
    const acceptMs = this.ctx.acceptTimeoutMs;
    const accepted = await translating(
      this.workflowId,
      this.runId,
      () => boundedAnswer(this.ctx.client, acceptMs, () => this.workflow.startUpdate(decideUpdate, { args: [input], waitForStage: WorkflowUpdateStage.ACCEPTED })),
      'decide',
    );
    if (accepted === 'no-answer') {
      const { decision, reason, ...fields } = input;
      await translating(this.workflowId, this.runId, () =>
        decision === 'approve' ? this.workflow.signal(approveSignal, fields) : this.workflow.signal(rejectSignal, { ...fields, ...(reason !== undefined ? { reason } : {}) }),
      );
      throw new DecisionPendingError(this.workflowId, what, decision, d.taskQueue, acceptMs);
    }
    // Accepted: in the run's history, so it applies even if the worker dies now.
    const answer = await translating(this.workflowId, this.runId, () => boundedAnswer(this.ctx.client, this.ctx.answerTimeoutMs, () => accepted.result()), 'decide');
    if (answer === 'no-answer') throw new DecisionPendingError(this.workflowId, what, 'update', d.taskQueue, this.ctx.answerTimeoutMs);
    return answer;
  }

  private async answered<T>(what: string, workers: QueueWorkers, call: () => Promise<T>): Promise<T> {
    const ms = this.ctx.answerTimeoutMs;
    const answer = await translating(this.workflowId, this.runId, () => boundedAnswer(this.ctx.client, ms, call), what);
    if (answer === 'no-answer') throw new NoAnswerError(this.workflowId, what, workers.taskQueue, ms);
    return answer;
  }
}

/** The steer input: the message, who, and `interrupt` only when set (as the CLI has always sent it). */
function steerInput(message: string, o: SteerOptions): SteerInput {
  return { message, by: o.by, ...(o.interrupt ? { interrupt: true } : {}) };
}

/** A decision's optional fields, only where given. */
function optional(o: { argsHash?: string; reason?: string }): Pick<DecideInput, 'argsHash' | 'reason'> {
  return { ...(o.reason !== undefined ? { reason: o.reason } : {}), ...(o.argsHash !== undefined ? { argsHash: o.argsHash } : {}) };
}

/** The RunResult a workflow failed by failedRunsFailWorkflow carries in its failure's details. */
function resultOf(err: RunFailedError): RunResult | null {
  const failure = (err.cause as { cause?: unknown } | undefined)?.cause;
  const details = failure instanceof ApplicationFailure ? failure.details : undefined;
  const r = details?.[0] as RunResult | undefined;
  return r !== undefined && r !== null && typeof r === 'object' && r.status === 'failed' ? r : null;
}
