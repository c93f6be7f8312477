// The `agentRun` workflow: a thin shell over the pure loop in ./loop. It owns
// what only a workflow can do durably: calling activities, waiting for a
// person's decision, taking signals, cancelling what runs, emitting the trace.
// Everything here is replayed deterministically: no I/O, no Node built-ins.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import { exitForError, isCancelledExit, runResult } from './exits';
import { applySummary, elideForWindow, planSummary } from '../common/context-window';
import { MAX_CACHE_CHARS } from '../common/defaults';
import { loopMetrics, type LoopMetrics } from './metrics';
import { loopActivities, type LoopActivities } from './activity-options';
import { ApprovalDesk, type AwaitingApproval } from './approvals';
import { DecisionInbox, STOPPING, type Ticket } from './decision-inbox';
import { isContinueAsNewDue, startedFrom, type CarriedState } from './continue-as-new';
import { SteeringQueue, steerInputProblem, steerMessage, type QueuedSteer } from './steering';
import { argsHash } from '../common/args-hash';
import { budgetLeft, childBudget, isBudgetSpent, exitFields, limitExit, nextStep, takeReply, type Exit } from './next-step';
import { cacheKey, firstPendingCall, idempotencyKey, isCacheable, parseCall, subAgentChildId, toolSpecsOf, type PendingCall } from './tool-calls';
import { capToolResult, declinedText, callSummary, notRunText, stoppedText, toolErrorText, toolResultMessage, type Decision } from '../common/transcript-text';
import { initialState, noChildren, stateOf, recordChildSpend, recordSummarySpend, rememberResult, type LoopState } from './run-state';
import { turnCostUsd } from '../common/turn-cost';
import {
  approveSignal,
  cancelSignal,
  configQuery,
  decideUpdate,
  raiseBudgetUpdate,
  reconcileUpdate,
  rejectSignal,
  statusQuery,
  steerSignal,
  steerUpdate,
  transcriptQuery,
  type SteerInput,
} from '../common/run-messages';
import { HardBudget, overReservationExit } from './budget';
import { subAgentBatch, type SubAgentBatchHost } from './sub-agent-batch';
import { ReconcileDesk, reconciledText, type AwaitingReconciliation, type ReconcileAnswer } from './reconciliation';
import { inputOfConfig, resumedInput } from '../common/resume-input';
import { runSubAgent } from './sub-agent';
import { attributesToUpsert, detailsText, statusAttributes, type VisibleState } from './visibility';
import { noteFiled } from '../common/message-refs';
import { askForSummary, askModel, askModelBudgeted, type ModelCallBase } from './model-call';
import { needsApproval, toolDefinitions, type OpenAiToolDefinition, type SubAgentSpec, type ToolSpec } from '../common/tool-spec';
import { traceSinks, type TraceEventType } from './trace';
import { stopCallsInThisProcess } from './stop-here';
import { agentStatusOf, type AgentInput, type BudgetShortfall, type Interruption, type ModelReply, type OverReservationFlag, type RunConfig, type RunResult, type RunStatus, type RunStatusView, type ToolOutcome, type Usage } from '../common/contract';

export type { CarriedState } from './continue-as-new';
import { forkState, startFork, wantsFork, type ForkStart } from './fork-setup';
import { askPatches, failedAtStart, loadPriorRun, localToolsPatched, resolveConfig, startingView, type Patches } from './run-setup';

export async function agentRun(input: AgentInput, carried?: CarriedState): Promise<RunResult> {
  const info = wf.workflowInfo();
  // Asked first, before anything awaits: where a patch is asked must not move
  // between the original run and its replay.
  const patches = askPatches();
  // Queries are not buffered like signals: answer them while the
  // configuration is being resolved, before the run replaces these handlers.
  const starting = startingView(info.workflowId, carried);
  wf.setHandler(statusQuery, () => starting);
  wf.setHandler(transcriptQuery, () => carried?.state.messages ?? []);
  // A run that continues a stopped one starts from its transcript and totals.
  let prior: Awaited<ReturnType<typeof loadPriorRun>> | null = null;
  // A fork starts from another run's first turns (./fork-setup).
  let fork: ForkStart | null = null;
  let cfg: RunConfig;
  try {
    fork = !carried && wantsFork(input) ? await startFork(input) : null;
    prior = !carried && !fork && typeof input?.resumeFrom === 'string' ? await loadPriorRun(input.resumeFrom) : null;
    // Resolved once per run and carried from execution to execution: a new
    // default on a new worker never changes a run already under way.
    cfg = carried?.cfg ?? (await resolveConfig(prior ? resumedInput(prior.config ? inputOfConfig(prior.config) : prior.input, input) : (fork?.input ?? input), patches));
    if (fork) cfg = { ...cfg, forkFrom: fork.origin };
  } catch (err) {
    // Bad input or a refused resume fails the run at once: its status says so, like its search attributes.
    if (err instanceof ApplicationFailure) failedAtStart(starting, err);
    throw err;
  }
  const resumed: CarriedState | undefined = prior ? startedFrom(cfg, stateOf(prior)) : fork ? startedFrom(cfg, forkState(fork)) : undefined;
  // The run chain names this run's trace file. A reset run replays an earlier
  // run's history up to the reset point, yet is a run of its own: its chain
  // is named by its own run id (the server keeps the earlier run's
  // firstExecutionRunId for it and for what it continues as new), and carried
  // from execution to execution. Any other run: its first execution's run id.
  const chainId = info.runId !== info.originalExecutionRunId ? info.runId : (carried?.chainId ?? info.firstExecutionRunId);
  // Effects are keyed by the first execution's run id, which a reset keeps:
  // a reset run's write finds what an earlier run of the workflow did and
  // says so ("already deleted by run R at T"), never acts or reports it twice.
  return new AgentRun(info.workflowId, chainId, info.firstExecutionRunId, input, cfg, carried ?? resumed, patches).run();
}

/** A refused call gets a trace line (tool_result refused). */
const REFUSED_CALLS_TRACED_PATCH = 'refused-calls-traced-v1';

class AgentRun {
  private readonly state: LoopState;
  private readonly executions: number;
  /** Turns already taken when this execution started. */
  private readonly turnsAtStart: number;
  private status: RunStatus = 'running';
  private interruption: Interruption | null = null;
  private readonly approvals: ApprovalDesk;
  private readonly reconcile = new ReconcileDesk();
  /** Decisions received and not yet applied (see DecisionInbox). */
  private readonly decisions: DecisionInbox;
  /** Steering messages waiting for the next turn boundary (see ./steering). */
  private readonly steering: SteeringQueue;
  private cancelReason: string | null = null;
  /** How the run ended, once it has. */
  private exit: Exit | null = null;
  private seq = 0;
  private readonly scope = new wf.CancellationScope();
  private readonly activities: LoopActivities;
  private readonly metrics: LoopMetrics;
  /** The run's tools as recorded at its start. */
  private readonly specs: ToolSpec[];
  /** Built once: the same object every turn, so its store address is computed once. */
  private readonly toolDefs: OpenAiToolDefinition[];
  /** A hard budget (limits.budgetMode "hard"); null for a soft one, as every run before it. */
  private readonly budget: HardBudget | null;

  constructor(
    private readonly runId: string,
    /** With runId, names this run chain's trace (see agentRun). */
    private readonly chainId: string,
    /** With runId, names the effects of the calls: the first execution's run id, kept by continue-as-new and by reset. */
    private readonly effectsChainId: string,
    private readonly input: AgentInput,
    private readonly cfg: RunConfig,
    carried: CarriedState | undefined,
    private readonly patches: Patches,
  ) {
    this.state = carried?.state ?? initialState(cfg);
    this.approvals = new ApprovalDesk(carried?.decisions ?? {});
    this.decisions = new DecisionInbox(this.approvals, patches.deferredSignals, (type, fields) => this.emit(type, fields), () => this.stopped);
    this.steering = new SteeringQueue(carried?.steers ?? []);
    this.seq = carried?.seq ?? 0;
    this.executions = (carried?.executions ?? 0) + 1;
    this.turnsAtStart = this.state.turns;
    this.activities = loopActivities(cfg, patches.waitForCancellation);
    this.specs = toolSpecsOf(cfg);
    this.toolDefs = toolDefinitions(this.specs);
    this.metrics = loopMetrics(cfg.model);
    this.budget = cfg.hardBudget
      ? new HardBudget(
          { cfg, state: this.state, emit: (type, fields) => this.emit(type, fields), showParked: (shortfall) => this.showParked(shortfall) },
          cfg.hardBudget,
          wf.workflowInfo().parent?.workflowId ?? null,
        )
      : null;
  }

  async run(): Promise<RunResult> {
    this.registerHandlers();
    this.upsertStatus();
    if (this.executions === 1) {
      this.emit('run_started', {
        model: this.cfg.model,
        maxTurns: this.cfg.maxTurns,
        maxBudgetUsd: this.cfg.maxBudgetUsd,
        ...(this.cfg.hardBudget ? { budgetMode: 'hard', ...this.cfg.hardBudget } : {}),
        chainId: this.chainId,
        ...(this.cfg.resumeFrom ? { resumedFrom: this.cfg.resumeFrom, turns: this.state.turns, costUsd: this.state.costUsd } : {}),
        ...(this.cfg.forkFrom ? { forkedFrom: this.cfg.forkFrom, turns: this.state.turns } : {}),
      });
    }
    // Temporal's own cancellation (`temporal workflow cancel`, a parent's Stop reaching its child) aborts the
    // calls running in this process at once too, as the cancel signal does; not a command, so replay is unchanged.
    this.scope.cancelRequested.catch(() => {
      if (this.cancelReason === null) stopCallsInThisProcess('the workflow was cancelled');
    });
    let exit: Exit;
    try {
      exit = await this.scope.run(() => this.loop());
    } catch (err) {
      if (err instanceof wf.ContinueAsNew) throw err;
      exit = exitForError(err, this.cancelReason);
    }
    // A Stop taken before the result is recorded wins over whatever the loop
    // reached meanwhile (a model answer or a failure that landed in the same
    // moment): the person asked the run to stop, and it says so.
    if (this.stopped && !isCancelledExit(exit)) {
      this.emit('stop_prevailed', { over: exit.status, overReason: exit.reason });
      exit = this.stopExit();
    }
    return this.finish(exit);
  }

  private async loop(): Promise<Exit> {
    for (;;) {
      // After a Stop nothing new starts: a call still pending stays pending
      // (a resume asks for it again), and no model call is made.
      if (this.stopped) return this.stopExit();
      const step = nextStep(this.state, this.cfg);
      if (step.kind === 'drain') {
        const stop = await this.handleCall(step.pending);
        if (stop) return stop;
        continue;
      }
      if (step.kind === 'stop') return step.exit;
      if (isContinueAsNewDue(this.state.turns - this.turnsAtStart, this.cfg.continueAsNewAtHistoryBytes)) await this.continueAsNew();
      // The turn boundary: every call of the last reply has its result.
      this.applySteers();

      const overBudget = await this.fitContextWindow();
      if (overBudget) return overBudget;
      this.showDetails();
      const asked = await this.askModel();
      if ('exit' in asked) return asked.exit;
      const { reply } = asked;
      const exit = takeReply(this.state, reply, this.cfg.pricing, asked.chargedUsd);
      this.metrics.turns.add(1);
      this.countSpend(reply.usage, asked.chargedUsd ?? turnCostUsd(reply.usage, this.cfg.pricing));
      this.emit('turn', {
        turn: this.state.turns,
        prompt_tokens: reply.usage.promptTokens,
        completion_tokens: reply.usage.completionTokens,
        total_tokens: reply.usage.promptTokens + reply.usage.completionTokens,
        turnCostUsd: turnCostUsd(reply.usage, this.cfg.pricing),
        costUsd: this.state.costUsd,
        finish: reply.finishReason,
        ...(reply.model ? { model: reply.model } : {}),
        ...(reply.usageEstimated ? { usageEstimated: true } : {}),
        ...(asked.hold ? { maxTokens: asked.hold.maxTokens, heldUsd: asked.hold.reservedUsd, chargedUsd: asked.chargedUsd } : {}),
      });
      if (asked.over) return this.budgetStop('the provider reported more usage than the call allowed', overReservationExit(asked.over));
      // A message sent before this answer is read before the run ends (when no limit stops it first).
      if (exit?.status === 'completed' && this.steering.hasDue(wf.workflowInfo().historyLength) && nextStep(this.state, this.cfg).kind === 'ask') continue;
      if (exit) return exit;
    }
  }

  /** Puts the steering messages due at this boundary into the transcript, each with who sent it and when. */
  private applySteers(): void {
    for (const s of this.steering.takeDue(wf.workflowInfo().historyLength)) {
      this.state.messages.push(steerMessage(s));
      this.emit('steered', { by: s.by, at: s.at, interrupt: s.interrupt, turn: this.state.turns, message: s.message.slice(0, 500) });
    }
  }

  /**
   * One turn's model call. With a hard budget it is made only within what the
   * budget holds for it (the run may park first), and charged at most that.
   */
  private async askModel(): Promise<{ exit: Exit } | { reply: ModelReply; chargedUsd?: number; over?: OverReservationFlag | null; hold?: { maxTokens: number; reservedUsd: number } }> {
    const base = this.modelCallBase();
    // The Web UI names each activity: "model turn 3", "read_file errors.log".
    const summary = `model turn ${this.state.turns + 1}`;
    if (!this.budget) return { reply: await askModel(this.activities.model, this.state, this.toolDefs, base, this.patches.messageRefs, summary) };
    const r = await this.budget.modelCall((budget) => askModelBudgeted(this.activities.model, this.state, this.toolDefs, { ...base, traceSeq: this.seq }, summary, budget));
    if ('exit' in r) return r;
    const { chargedUsd, over } = this.budget.settle(r.reply, r.hold);
    return { reply: r.reply, chargedUsd, over, hold: r.hold };
  }

  /** Every model call's tokens and cost in the metrics: turns and summaries alike. */
  private countSpend(usage: Usage, costUsd: number): void {
    this.metrics.promptTokens.add(usage.promptTokens);
    this.metrics.completionTokens.add(usage.completionTokens);
    this.metrics.costMicroUsd.add(Math.round(costUsd * 1e6));
  }

  private modelCallBase(): ModelCallBase {
    return { runId: this.runId, chainId: this.chainId, traceSeq: this.seq, model: this.cfg.model, ...(this.cfg.debug ? { debug: true } : {}) };
  }

  /**
   * With a context policy, keeps the next prompt inside the model's window:
   * elides old tool results, or folds old turns into a summary the model
   * writes (paid from the budget: the run stops here if that spent it).
   */
  private async fitContextWindow(): Promise<Exit | null> {
    const last = this.state.promptTokensPerTurn.at(-1);
    const policy = this.cfg.context;
    const since = this.state.messagesAtLastCall ?? 0;
    let exit: Exit | null = null;
    if (policy?.strategy === 'summarize' && last !== undefined) {
      const plan = planSummary(this.state.messages, last, since, policy);
      if (plan) {
        const reply = await askForSummary(this.activities.model, plan.request, this.modelCallBase(), plan.turns);
        const cost = recordSummarySpend(this.state, reply.usage, this.cfg.pricing);
        applySummary(this.state.messages, plan, reply.message.content ?? '');
        this.countSpend(reply.usage, cost);
        this.emit('context_summarized', {
          turns: plan.turns,
          estimatedTokensBefore: plan.estimatedBefore,
          estimatedTokensAfter: plan.estimatedAfter,
          windowTokens: policy.windowTokens,
          prompt_tokens: reply.usage.promptTokens,
          completion_tokens: reply.usage.completionTokens,
          summaryCostUsd: cost,
          costUsd: this.state.costUsd,
        });
        if (isBudgetSpent(this.state, this.cfg)) exit = this.budgetStop();
      }
    } else if (policy && last !== undefined) {
      const cut = elideForWindow(this.state.messages, last, since, policy);
      if (cut) {
        this.emit('context_elided', { elided: cut.elided, droppedTurns: cut.droppedTurns, estimatedTokensBefore: cut.estimatedBefore, estimatedTokensAfter: cut.estimatedAfter, windowTokens: policy.windowTokens });
      }
    }
    this.state.messagesAtLastCall = this.state.messages.length;
    return exit;
  }

  private async continueAsNew(): Promise<never> {
    // Signals and updates in flight finish here, not in limbo between executions.
    await this.settleHandlers();
    const info = wf.workflowInfo();
    this.emit('continued_as_new', { execution: this.executions + 1, historyLength: info.historyLength, historySize: info.historySize, turns: this.state.turns });
    const carried: CarriedState = {
      version: 2,
      cfg: this.cfg,
      state: this.state,
      decisions: this.approvals.decisions,
      seq: this.seq,
      executions: this.executions,
      chainId: this.chainId,
      ...(this.steering.size > 0 ? { steers: this.steering.carried() } : {}),
    };
    return wf.continueAsNew<typeof agentRun>(this.input, carried);
  }

  /** Runs, declines, or serves from cache one pending call. Returns an exit when the run must stop. */
  private async handleCall(pending: PendingCall): Promise<Exit | null> {
    const { call } = pending;
    const parsed = parseCall(call, this.specs);
    if (!parsed.ok) {
      // Refused before it could run (unknown tool, bad arguments): on record like any other call's end.
      // Behind a patch: a run that refused a call before this line existed would otherwise write every later line one seq off.
      if (wf.patched(REFUSED_CALLS_TRACED_PATCH)) this.emit('tool_result', { toolName: parsed.toolName.slice(0, 100), callId: call.id, ms: 0, ok: false, refused: parsed.error });
      return this.toolFailed(pending, parsed.toolName, parsed.error, false);
    }
    const { toolName, args, spec } = parsed;
    const key = idempotencyKey(this.runId, this.effectsChainId, pending, this.state);
    // A steer with `interrupt`: no call of this reply starts after it.
    const interrupt = this.steering.interruptNow(wf.workflowInfo().historyLength);
    if (interrupt) return this.declinedBySteer(pending, toolName, interrupt);

    // Approval comes before the cache: a cached result never stands in for a decision.
    if (needsApproval(spec.needsApproval, args)) {
      if (this.stopped) return this.stopExit();
      const hash = argsHash(args);
      const hashRequired = this.cfg.requireArgsHash?.includes(toolName) ?? false;
      const decision = await this.awaitDecision({ key, callId: call.id, toolName, args, argsHash: hash, hashRequired });
      if (decision === null) {
        return {
          status: 'interrupted',
          interruption: { type: 'approval', callId: call.id, toolName, args, argsHash: hash },
          reason: `no decision on ${toolName} call ${call.id} within ${this.cfg.approvalTimeoutMs} ms`,
        };
      }
      if (decision.decision === 'reject') {
        const text = this.cfg.experimentalEmptyRejection ? '' : declinedText(toolName, decision);
        this.state.messages.push(toolResultMessage(call, text));
        this.emit('tool_result', { toolName, callId: call.id, ms: 0, ok: false, declined: true });
        this.metrics.toolErrors.add(1, { tool: toolName, kind: 'declined' });
        return null;
      }
    }

    const cacheable = isCacheable(spec, this.cfg.dedupe);
    const ck = cacheKey(toolName, args);
    const cached = cacheable ? this.state.cache[ck] : undefined;
    if (cached !== undefined) {
      this.state.messages.push(toolResultMessage(call, cached));
      this.emit('tool_result', { toolName, callId: call.id, ms: 0, ok: true, cached: true });
      return null;
    }

    // A Stop taken while this call waited (for its decision, say): it never starts.
    if (this.stopped) return this.stopExit();
    if (spec.subAgent && this.budget) return subAgentBatch(this.batchHost(this.budget), pending);
    if (spec.subAgent) return this.subAgent(pending, spec, spec.subAgent, args, cacheable ? ck : null);

    this.emit('tool_start', { toolName, args, callId: call.id });
    const started = Date.now();
    let outcome = await this.runToolActivity(pending, spec, toolName, args, key, started, false);
    this.state.toolRuns += 1;
    this.emit('tool_result', { toolName, callId: call.id, ms: Date.now() - started, ok: outcome.ok });
    // Only runs that asked for it park: every other run tells the model what the tool said.
    while (outcome.ok && outcome.outcomeUnknown === true && this.cfg.unknownOutcomes === 'ask') {
      const answer = await this.awaitReconciliation({ callId: call.id, toolName, args, known: outcome.content });
      if (answer === null) break;
      if (answer.outcome === 'happened') {
        outcome = { ok: true, content: capToolResult(reconciledText(toolName, answer), this.cfg.maxToolResultChars) };
        break;
      }
      if (this.stopped) break;
      // Tried again on a person's word: the effect protocol takes the stale claim over and acts.
      const again = Date.now();
      this.emit('tool_start', { toolName, args, callId: call.id, retryUnknown: true, by: answer.by });
      outcome = await this.runToolActivity(pending, spec, toolName, args, key, again, true);
      this.emit('tool_result', { toolName, callId: call.id, ms: Date.now() - again, ok: outcome.ok });
    }
    if (!outcome.ok) return this.toolFailed(pending, toolName, outcome.error, outcome.permanent);
    // The tool activity already cut its result to maxToolResultChars.
    const message = toolResultMessage(call, outcome.content);
    this.state.messages.push(message);
    noteFiled(this.state, message, outcome.ref);
    if (cacheable) this.remember(ck, outcome.content);
    return null;
  }

  /** A call of the current reply not run because a steer interrupted: declined, with the message as the reason. */
  private declinedBySteer(pending: PendingCall, toolName: string, s: QueuedSteer): null {
    const text = declinedText(toolName, { decision: 'reject', reason: s.message, by: s.by });
    this.state.messages.push(toolResultMessage(pending.call, text));
    this.emit('tool_result', { toolName, callId: pending.call.id, ms: 0, ok: false, declined: true, interrupted: true });
    this.metrics.toolErrors.add(1, { tool: toolName, kind: 'declined' });
    return null;
  }

  /** One attempt chain of the call's activity; a Stop while it runs is recorded in the transcript. */
  private async runToolActivity(pending: PendingCall, spec: ToolSpec, toolName: string, args: Record<string, unknown>, key: string, started: number, retryUnknown: boolean): Promise<ToolOutcome> {
    // Guarded: histories recorded before local tools scheduled these as activities.
    const activity = this.activities.tool(spec, spec.activity?.local === true && localToolsPatched(this.patches));
    try {
      return await activity.runTool.executeWithOptions({ summary: callSummary(toolName, args, this.approvals.decisions[key] ?? null) }, [{
        runId: this.runId,
        chainId: this.chainId,
        callId: pending.call.id,
        idempotencyKey: key,
        toolName,
        args,
        workspace: this.cfg.workspace,
        traceSeq: this.seq,
        maxResultChars: this.cfg.maxToolResultChars,
        ...(retryUnknown ? { retryUnknown: true } : {}),
      }]);
    } catch (err) {
      if (wf.isCancellation(err)) this.recordStopped(pending, toolName, started);
      throw err;
    }
  }

  /**
   * Parks the run on a write whose outcome is unknown until a person answers
   * (`reconcile`); null when the approval timeout passed first or a Stop came:
   * the model is then told the outcome is unknown.
   */
  private async awaitReconciliation(req: AwaitingReconciliation): Promise<ReconcileAnswer | null> {
    this.reconcile.awaiting = req;
    this.status = 'interrupted';
    this.interruption = { type: 'reconciliation', ...req };
    this.upsertStatus();
    this.emit('reconciliation_required', { toolName: req.toolName, callId: req.callId, known: req.known });
    const ready = () => this.reconcile.hasAnswer() || this.stopped;
    if (this.cfg.approvalTimeoutMs === null) await wf.condition(ready);
    else await wf.condition(ready, this.cfg.approvalTimeoutMs);
    // Taken even when a Stop came with it, so its update can answer; the Stop wins.
    const taken = this.reconcile.take();
    const answer = this.stopped ? null : taken;
    this.emit('reconciliation_decided', { callId: req.callId, outcome: answer?.outcome ?? (this.stopped ? 'stopped' : 'timed_out'), by: answer?.by ?? null });
    if (!this.stopped) {
      this.status = 'running';
      this.interruption = null;
      this.upsertStatus();
    }
    return answer;
  }

  /**
   * The run was stopped while this call ran, and the tool reported that it
   * stopped without finishing (a write that had already acted reports its
   * result instead: the workflow waits for it). The transcript says so, so it
   * stays valid and tells the truth.
   */
  private recordStopped(pending: PendingCall, toolName: string, started: number): void {
    const reason = this.cancelReason ?? 'the workflow was cancelled';
    this.state.toolRuns += 1;
    this.state.messages.push(toolResultMessage(pending.call, stoppedText(toolName, reason)));
    this.emit('tool_result', { toolName, callId: pending.call.id, ms: Date.now() - started, ok: false, stopped: true });
    this.metrics.toolErrors.add(1, { tool: toolName, kind: 'stopped' });
  }

  /** A Stop was taken: the cancel signal, or Temporal's own cancellation of the workflow. */
  private get stopped(): boolean {
    return this.cancelReason !== null || this.scope.consideredCancelled;
  }

  private stopExit(): Exit {
    const reason = this.cancelReason ?? 'the workflow was cancelled';
    return { status: 'interrupted', interruption: { type: 'cancelled', reason }, reason };
  }

  private remember(key: string, content: string): void {
    rememberResult(this.state, key, content, this.patches.boundedCache ? MAX_CACHE_CHARS : null);
  }

  /** A tool error becomes transcript text per policy; a permanent one or the `fatal` policy stops the run. */
  private toolFailed(pending: PendingCall, toolName: string, error: string, permanent: boolean): Exit | null {
    this.metrics.toolErrors.add(1, { tool: toolName, kind: permanent ? 'permanent' : 'error' });
    const policy = this.cfg.toolErrors;
    // The result is written even when the run stops, so the transcript stays valid and resumable.
    const text = toolErrorText(capToolResult(error, this.cfg.maxToolResultChars), policy === 'generic' ? 'generic' : 'describe');
    this.state.messages.push(toolResultMessage(pending.call, text));
    if (permanent && this.cfg.permanentToolErrors === 'stop') {
      const msg = `permanent tool error in ${toolName} (call ${pending.call.id}), retrying cannot help: ${error}`;
      return { status: 'failed', interruption: null, reason: msg, error: msg, errorType: 'PermanentToolError' };
    }
    if (policy === 'fatal') {
      const msg = `tool ${toolName} failed (call ${pending.call.id}) and toolErrors is "fatal": ${error}`;
      return { status: 'failed', interruption: null, reason: msg, error: msg, errorType: 'ToolError' };
    }
    return null;
  }

  /** Parks the run until a person decides; null when the approval timeout passed first. */
  private async awaitDecision(req: AwaitingApproval): Promise<Decision | null> {
    const { decisions } = this.approvals;
    const known = decisions[req.key];
    if (known) return known;
    this.approvals.awaiting = req;
    this.status = 'interrupted';
    this.interruption = { type: 'approval', callId: req.callId, toolName: req.toolName, args: req.args, argsHash: req.argsHash };
    this.upsertStatus();
    this.emit('approval_required', { toolName: req.toolName, args: req.args, callId: req.callId, argsHash: req.argsHash, ...(req.hashRequired ? { argsHashRequired: true } : {}) });
    this.metrics.approvalsRequested.add(1, { tool: req.toolName });
    const parkedAt = Date.now();
    await this.decisionOrTimeout(req.key);
    this.approvals.awaiting = null;
    const decision = decisions[req.key] ?? this.rejectForInterrupt(req);
    if (decision) {
      this.metrics.approvalsDecided.add(1, { tool: req.toolName, decision: decision.decision });
      this.metrics.approvalWaitMs.record(Math.max(0, Date.now() - parkedAt), { tool: req.toolName });
      this.status = 'running';
      this.interruption = null;
      this.upsertStatus();
    }
    return decision;
  }

  /**
   * A steer with `interrupt` reached the parked call before any decision: the
   * call is rejected with the message as the reason, and the message is due
   * at the boundary that follows (the steer has acted).
   */
  private rejectForInterrupt(req: AwaitingApproval): Decision | null {
    const s = this.steering.anyInterrupt();
    if (!s) return null;
    s.acted = true;
    const decision: Decision = { callId: req.callId, decision: 'reject', reason: s.message, by: s.by, interrupt: true };
    this.approvals.decisions[req.key] = decision;
    this.emit('approval_decided', { toolName: req.toolName, ...decision });
    return decision;
  }

  /**
   * Waits until the call has a decision or the approval timeout passes.
   * Handlers only enqueue decisions; they are applied here, where the loop
   * waits (see DecisionInbox), and the condition itself only looks. The
   * timer is started once for the whole wait, as wf.condition(fn, timeout)
   * would: the same commands either way.
   */
  private async decisionOrTimeout(key: string): Promise<void> {
    // A steer with `interrupt` ends the wait too (an explicit decision that came with it is taken first).
    const decided = () => this.approvals.decisions[key] !== undefined || this.steering.anyInterrupt() !== null;
    const untilDecided = async () => {
      for (;;) {
        this.decisions.drain();
        if (decided()) return;
        // decided(): histories recorded before the inbox took decisions in their handler.
        await wf.condition(() => this.decisions.hasPending() || decided());
      }
    };
    const timeout = this.cfg.approvalTimeoutMs;
    if (timeout === null) return untilDecided();
    await wf.CancellationScope.cancellable(async () => {
      try {
        await Promise.race([wf.sleep(timeout), untilDecided()]);
      } finally {
        wf.CancellationScope.current().cancel();
      }
    });
  }

  /**
   * A sub-agent run, paid from this run's budget: the child may spend at most
   * what is left, and the budget is checked again the moment it returns, so
   * the whole tree overshoots by at most one turn.
   */
  private async subAgent(pending: PendingCall, spec: ToolSpec, sub: SubAgentSpec, args: Record<string, unknown>, ck: string | null): Promise<Exit | null> {
    const { call } = pending;
    const toolName = spec.name;
    const left = budgetLeft(this.state, this.cfg);
    if (left !== null && left <= 0) {
      this.state.messages.push(toolResultMessage(call, notRunText(toolName, 'the run\'s budget is spent')));
      this.emit('tool_result', { toolName, callId: call.id, ms: 0, ok: false, notRun: 'budget spent' });
      return this.budgetStop();
    }
    const task = String(args[sub.taskArgument]);
    this.emit('tool_start', { toolName, args, callId: call.id, budgetUsd: childBudget(left) });
    const started = Date.now();
    const child = await runSubAgent(this.cfg, sub, toolName, subAgentChildId(this.runId, pending, toolName), task, childBudget(left));
    // The parent pays for its children: their spend counts against its budget.
    recordChildSpend(this.state, child.costUsd, child.usage);
    if (this.stopped) {
      // The child was stopped with its parent: that is a Stop, not a tool failure.
      this.recordStopped(pending, toolName, started);
      return this.stopExit();
    }
    this.state.toolRuns += 1;
    this.emit('tool_result', { toolName, callId: call.id, ms: Date.now() - started, ok: child.outcome.ok, childCostUsd: child.costUsd });
    const failed = child.outcome.ok ? null : this.toolFailed(pending, toolName, child.outcome.error, child.outcome.permanent);
    if (child.outcome.ok) {
      this.state.messages.push(toolResultMessage(call, child.outcome.content));
      if (ck !== null) this.remember(ck, child.outcome.content);
    }
    if (failed) return failed;
    return isBudgetSpent(this.state, this.cfg) ? this.budgetStop() : null;
  }

  /**
   * Stops for the budget while calls of the last reply may still be pending:
   * each gets a result saying it was not run, so the transcript keeps the
   * protocol's two rules.
   */
  private budgetStop(why = 'the run\'s budget is spent', stop?: Exit): Exit {
    for (let p = firstPendingCall(this.state.messages); p; p = firstPendingCall(this.state.messages)) {
      this.state.messages.push(toolResultMessage(p.call, notRunText(p.call.function.name, why)));
      this.emit('tool_result', { toolName: p.call.function.name, callId: p.call.id, ms: 0, ok: false, notRun: stop ? why : 'budget spent' });
    }
    if (stop) return stop;
    const exit = limitExit(this.state, this.cfg);
    if (exit) return exit;
    return { status: 'budget_exceeded', interruption: { type: 'max_budget' }, reason: 'budget spent' };
  }

  private async finish(exit: Exit): Promise<RunResult> {
    this.exit = exit;
    this.status = exit.status;
    this.interruption = exit.interruption;
    this.approvals.awaiting = null;
    // Decisions received and not applied are refused (traced) before the run's last line.
    this.decisions.drain();
    for (const s of this.steering.takeAll()) {
      this.emit('steer_dropped', { by: s.by, at: s.at, reason: `the run ended (${exit.status}) before its next turn` });
    }
    this.upsertStatus(exit);
    this.metrics.runs.add(1, { status: exit.status, error_type: exitFields(exit).errorType ?? '' });
    this.emit('run_stopped', { status: exit.status, reason: exit.reason, turns: this.state.turns, costUsd: this.state.costUsd });
    // Let an in-flight `decide` update answer before the run closes.
    await wf.CancellationScope.nonCancellable(() => this.settleHandlers());
    return { ...runResult(this.runId, exit, this.state), ...this.budgetFields(), ...(this.cfg.forkFrom ? { forkedFrom: this.cfg.forkFrom } : {}) };
  }

  /** Hard budget only: the budget and the flag of a reply beyond its hold, in the status and the result. */
  private budgetFields(): Pick<RunStatusView, 'budget' | 'usageOverReservation'> {
    if (!this.budget) return {};
    return { budget: this.budget.view(), usageOverReservation: this.state.usageOverReservation ?? null };
  }

  /** Parked on the budget (or no longer): the status, the details panel and AgentStatus say so. */
  private showParked(shortfall: BudgetShortfall | null): void {
    this.status = shortfall ? 'interrupted' : 'running';
    this.interruption = shortfall;
    this.upsertStatus();
  }

  /** What a batch of sub-agent calls needs of this run (workflows/sub-agent-batch.ts). */
  private batchHost(budget: HardBudget): SubAgentBatchHost {
    return {
      cfg: this.cfg,
      state: this.state,
      specs: this.specs,
      runId: this.runId,
      budget,
      stopped: () => this.stopped,
      emit: (type, fields) => this.emit(type, fields),
      toolFailed: (pending, toolName, error, permanent) => this.toolFailed(pending, toolName, error, permanent),
      recordStopped: (pending, toolName, started) => this.recordStopped(pending, toolName, started),
      remember: (key, content) => this.remember(key, content),
      stopExit: () => this.stopExit(),
    };
  }

  // --- messages

  private registerHandlers(): void {
    wf.setHandler(statusQuery, () => this.view());
    wf.setHandler(transcriptQuery, () => this.state.messages);
    wf.setHandler(configQuery, () => this.cfg);
    wf.setHandler(approveSignal, (input) => this.decisions.receive({ signal: 'approve', input, verdict: 'approve' }));
    wf.setHandler(rejectSignal, (input) => this.decisions.receive({ signal: 'reject', input, verdict: 'reject' }));
    // A Stop is applied at once: it must interrupt whatever the loop waits for.
    wf.setHandler(cancelSignal, (input) => this.cancel(input));
    wf.setHandler(steerSignal, (input) => {
      const problem = this.steerProblem(input);
      if (problem) this.emit('signal_ignored', { signal: 'steer', reason: problem });
      else this.steer(input, 'signal');
    });
    wf.setHandler(
      steerUpdate,
      (input) => {
        // Checked again: the state may have moved since the validator ran.
        const problem = this.steerProblem(input);
        if (problem) throw ApplicationFailure.create({ type: 'SteerRefused', message: problem, nonRetryable: true });
        this.steer(input, 'update');
        return this.view();
      },
      {
        validator: (input) => {
          const problem = this.steerProblem(input);
          if (problem) throw new Error(problem);
        },
      },
    );
    // Registered for every run, so a soft run's refusal says why; only a hard budget ever applies one.
    wf.setHandler(
      raiseBudgetUpdate,
      (input) => {
        this.budget?.raise(input);
        return this.view();
      },
      {
        validator: (input) => {
          const problem = this.exit ? 'the run has ended' : this.stopped ? STOPPING : this.budget ? this.budget.raiseProblem(input) : 'this run has a soft budget (limits.budgetMode "soft"): nothing waits for a raise; resume it with a higher budget instead';
          if (problem) throw new Error(problem);
        },
      },
    );
    wf.setHandler(
      reconcileUpdate,
      async (input) => {
        this.reconcile.receive(input);
        // Answer once the loop has taken it, so the caller sees its effect.
        await wf.condition(() => !this.reconcile.hasAnswer());
        return this.view();
      },
      {
        validator: (input) => {
          const problem = (this.stopped ? STOPPING : null) ?? this.reconcile.problem(input);
          if (problem) throw new Error(problem);
        },
      },
    );
    wf.setHandler(
      decideUpdate,
      async (input) => {
        const key = this.approvals.awaiting?.key;
        const ticket: Ticket = { done: false, taken: null, problem: null };
        this.decisions.receive({ signal: 'decide', input, verdict: input.decision, ticket });
        await wf.condition(() => ticket.done);
        // Accepted, then refused when applied (the state moved between the two): the caller learns why.
        if (this.patches.deferredSignals && ticket.problem !== null) throw ApplicationFailure.create({ type: 'DecisionRefused', message: ticket.problem, nonRetryable: true });
        // Answer once the loop has taken the decision, so the caller sees its effect.
        const taken = this.patches.deferredSignals ? ticket.taken : key;
        await wf.condition(() => this.approvals.awaiting?.key !== taken);
        return this.view();
      },
      {
        // Refused updates leave no trace in history: the caller learns at once.
        validator: (input) => {
          const problem = (this.stopped ? STOPPING : null) ?? this.approvals.problem(input, input?.decision) ?? this.decisions.pendingFor(input?.callId);
          if (problem) throw new Error(problem);
        },
      },
    );
  }

  /**
   * Waits until every signal and update handler is done. Decisions still in
   * the inbox are applied (or refused) first, so their updates can answer.
   */
  private async settleHandlers(): Promise<void> {
    for (;;) {
      this.decisions.drain();
      if (wf.allHandlersFinished()) return;
      await wf.condition(() => this.decisions.hasPending() || wf.allHandlersFinished());
    }
  }

  /** Why a steering message cannot be taken now (a bad payload, a Stop, the run's end), or null. */
  private steerProblem(input: unknown): string | null {
    if (this.exit !== null) return `the run has ended (${this.exit.status}): it takes no more messages; resume it with a new one`;
    if (this.stopped) return 'the run is stopping: a Stop came first, so it takes no more messages';
    return steerInputProblem(input);
  }

  /** Queues a checked steering message; it is put into the transcript at the next turn boundary. */
  private steer(input: SteerInput, via: 'signal' | 'update'): void {
    const s = this.steering.receive(input, wf.workflowInfo().historyLength, new Date(Date.now()).toISOString());
    this.emit('steer_queued', { by: s.by, at: s.at, interrupt: s.interrupt, via, queued: this.steering.size, message: s.message.slice(0, 500) });
    this.showDetails();
  }

  private cancel(input: unknown): void {
    if (this.cancelReason !== null || (this.status !== 'running' && this.status !== 'interrupted')) {
      this.emit('signal_ignored', { signal: 'cancel', reason: 'the run is already stopping' });
      return;
    }
    const reason = (input as { reason?: unknown } | null)?.reason;
    this.cancelReason = typeof reason === 'string' && reason.trim() ? reason : 'cancelled';
    this.scope.cancel();
    stopCallsInThisProcess(this.cancelReason);
  }

  private view(): RunStatusView {
    const exit = this.exit;
    return {
      runId: this.runId,
      workflowId: this.runId,
      status: this.status,
      agentStatus: agentStatusOf(this.status, this.interruption, exit !== null),
      reason: exit?.reason ?? null,
      errorType: exit?.status === 'failed' ? exit.errorType : null,
      interruption: this.interruption,
      turns: this.state.turns,
      costUsd: this.state.costUsd,
      toolRuns: this.state.toolRuns,
      usage: { ...this.state.usage },
      usageEstimatedTurns: this.state.usageEstimatedTurns ?? 0,
      children: this.state.children ?? noChildren(),
      queuedSteers: this.steering.views(),
      ...this.budgetFields(),
      ...(this.cfg.forkFrom ? { forkedFrom: this.cfg.forkFrom } : {}),
    };
  }

  private emit(type: TraceEventType, fields: Record<string, unknown>): void {
    this.seq += 1;
    traceSinks.trace.event({ seq: this.seq, type, ...fields }, this.chainId);
  }

  /**
   * At most one upsert per status change (start, parked, resumed, finished),
   * never per turn, carrying only what changed: each is a command in history
   * and a billed Action. A run whose client set its starting attributes
   * upserts nothing at its start.
   */
  private upsertStatus(exit?: Exit): void {
    this.showDetails();
    const info = wf.workflowInfo();
    const all = statusAttributes(this.visible(), exit, info.parent?.workflowId, this.patches.pendingArgsHash);
    const pairs = attributesToUpsert(all, info.typedSearchAttributes, this.patches.all);
    if (pairs.length > 0) wf.upsertSearchAttributes(pairs);
  }

  /** The run's live state for the Web UI's details panel (not a command: free to update every turn). */
  private showDetails(): void {
    wf.setCurrentDetails(detailsText(this.visible()));
  }

  private visible(): VisibleState {
    return { cfg: this.cfg, state: this.state, status: this.status, interruption: this.interruption, queuedSteers: this.steering.size };
  }
}
