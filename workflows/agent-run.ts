// The `agentRun` workflow: the agent loop. Each turn drains the last reply's
// tool calls, then asks the model; it stops on an answer, a limit, a failure
// or a Stop. Every concern lives in a module of its own, reached through one
// object each (see ./run-context.ts):
//   stop.ts            the cancel signal and Temporal's cancellation
//   approvals.ts       calls that wait for a person's decision
//   steering.ts        messages a person sends while the run works
//   model-turn.ts      the model call of a turn and its cost; the prompt kept inside the model's window
//   budget.ts          every budget rule: soft checks, hard holds, raise, the budget stop
//   outage-wait.ts     model and tool calls that wait out an outage
//   tool-dispatch.ts   one tool call, from the reply to its result
//   sub-agents.ts      tool calls that run a child agent
//   reconcile.ts       writes whose outcome is unknown
//   continue-as-new.ts long runs handed to a fresh execution
//   visibility.ts      status query, details panel, search attributes
//   start.ts           the configuration, a resume, a fork
// Everything here is replayed deterministically: no I/O, no Node built-ins.
import * as wf from '@temporalio/workflow';
import { approveSignal, cancelSignal, configQuery, decideUpdate, raiseBudgetUpdate, reconcileUpdate, rejectSignal, statusQuery, steerSignal, steerUpdate, transcriptQuery } from '../common/run-messages.js';
import { toolDefinitions, type OpenAiToolDefinition } from '../common/tool-spec.js';
import { AGENT_RUN_FAILED, type AgentInput, type RunResult } from '../common/contract.js';
import { ApplicationFailure } from '@temporalio/workflow';
import { loopActivities } from './activity-options.js';
import { Approvals } from './approvals.js';
import { continueAsNew, continueAsNewDue } from './continue-as-new.js';
import { upgradeCarried, type CarriedState, type LoopStart } from './carried-state.js';
import { exitForError, isCancelledExit, runResult, type Exit } from './exits.js';
import { loopMetrics } from './loop-metrics.js';
import { ModelOutage, ToolOutage, type OutageSink } from './outage-wait.js';
import { Budget } from './budget.js';
import { fitContextWindow, ModelTurn, summarizeOldTurns } from './model-turn.js';
import { limitExit, nextStep } from './next-step.js';
import { Notifier } from './notify.js';
import { Reconciler } from './reconcile.js';
import type { RunContext, RunIds } from './run-context.js';
import { startRun } from './start.js';
import { PUBLISH_SIGNAL, RunStream } from './run-stream.js';
import { ReadAheadResults } from './read-ahead.js';
import { setStartingHandlers } from './early-handlers.js';
import { RunTrace } from './trace.js';
import { Visibility } from './visibility.js';
import { Steering } from './steering.js';
import { Stop } from './stop.js';
import { SignaturesUsed } from './signatures-used.js';
import { ToolDispatch } from './tool-dispatch.js';
import { decodedSignal, decodedUpdate } from './undecodable.js';

/**
 * The agent run workflow (type `agentRun`): the loop of model calls and tool
 * calls under the input's turn cap and budget, parking for approvals, until
 * one of the five exits. A caller passes only `input`.
 *
 * The function behind it takes a second argument, the run's own state across
 * continue-as-new (./carried-state.ts), which stays out of this exported type.
 * It is read only in an execution started by continue-as-new: a caller that
 * passes one at start gets the run failed as InvalidInput, so no state (a
 * decision, a spend) can be injected from outside. A named function
 * expression, so `agentRun.name` (what the client sends as the workflow
 * type) is `agentRun`.
 */
export const agentRun: (input: AgentInput) => Promise<RunResult> = async function agentRun(input: AgentInput, carriedArg?: unknown): Promise<RunResult> {
  // Read once, here, before anything else: upgraded and checked, or the failure to fail the run with (in startRun).
  const carried = readCarried(carriedArg);
  const kept = carried instanceof ApplicationFailure ? undefined : carried;
  // Before anything awaits: the live stream (its poll update, publish signal
  // and queries) and an answer for every update and query a caller may send
  // the moment `start` returns (./early-handlers.ts).
  const stream = new RunStream(kept?.stream);
  setStartingHandlers(kept?.cfg);
  const { ids, cfg, from } = await startRun(input, carried);
  return new AgentRun(ids, input, from, cfg, stream).run();
};

/** The carried state of a continued execution, upgraded; a failure naming why it cannot be read, or why a fresh start may not pass one. */
function readCarried(raw: unknown): CarriedState | ApplicationFailure | undefined {
  if (raw === undefined) return undefined;
  if (wf.workflowInfo().continuedFromExecutionRunId === undefined) {
    return ApplicationFailure.create({
      type: 'InvalidInput',
      message: 'invalid input: agentRun takes one argument, the input; a second is the run\'s own state across continue-as-new and is not accepted at start',
      nonRetryable: true,
      details: [{ field: 'input' }],
    });
  }
  try {
    return upgradeCarried(raw);
  } catch (err) {
    if (err instanceof ApplicationFailure) return err;
    throw err;
  }
}

class AgentRun {
  private readonly ctx: RunContext;
  /** This execution's number in the run's chain of continue-as-new executions (1 for the first). */
  private readonly execution: number;
  /** Turns already taken when this execution started. */
  private readonly turnsAtStart: number;
  private readonly approvals: Approvals;
  private readonly steering: Steering;
  private readonly budget: Budget;
  private readonly modelTurn: ModelTurn;
  private readonly tools: ToolDispatch;
  /** Built once: the same object every turn, so its store address is computed once. */
  private readonly toolDefs: OpenAiToolDefinition[];

  constructor(ids: RunIds, input: AgentInput, from: LoopStart, cfg: RunContext['cfg'], stream: RunStream) {
    const { state } = from;
    const specs = cfg.toolSpecs;
    const visibility = new Visibility({ ids, cfg, state });
    // The live stream was set up first thing (agentRun): the events traced
    // while the run is built are on it too.
    const trace = new RunTrace(ids.chainId, from.seq, stream);
    stream.traceIgnoredWith((reason) => trace.emit('signal_ignored', { signal: PUBLISH_SIGNAL, reason }));
    const activities = loopActivities(cfg);
    const outageSink: OutageSink = { show: (kind, view) => visibility.waitingOut(kind, view), emit: (type, fields) => trace.emit(type, fields) };
    const ctx: RunContext = {
      ids,
      input,
      cfg,
      state,
      specs,
      activities,
      modelCalls: new ModelOutage(cfg, activities, outageSink),
      toolCalls: new ToolOutage(cfg, outageSink),
      metrics: loopMetrics(cfg.model),
      trace,
      stream,
      stop: new Stop(),
      visibility,
      signaturesUsed: new SignaturesUsed(from.usedSteerSignatures),
      notify: new Notifier(ids, cfg, trace),
      readAhead: new ReadAheadResults(specs),
    };
    this.ctx = ctx;
    this.execution = from.executions + 1;
    this.turnsAtStart = state.turns;
    this.toolDefs = toolDefinitions(specs);
    this.steering = new Steering(ctx, from.steers);
    this.approvals = new Approvals(ctx, this.steering, from.decisions);
    this.steering.decidedFirst = (callId) => this.approvals.hasDecision(callId);
    this.budget = new Budget(ctx, () => limitExit(ctx.state, ctx.cfg));
    this.modelTurn = new ModelTurn(ctx, this.budget);
    const reconciler = new Reconciler(ctx);
    this.tools = new ToolDispatch(ctx, this.approvals, this.steering, reconciler, this.budget);
    ctx.visibility.attach({ queuedSteers: () => this.steering.queue.views(), budgetFields: () => this.budget.fields() });
    // Every handler of the run, one line each, each calling the concern it
    // belongs to. Signals and updates that arrived before this point were
    // buffered; each is delivered when its handler is set, in this order: the
    // order is part of what a run records, so a reorder is a loop change
    // (a new pinned version, docs/deployment.md). A payload the worker could not decode is refused to its sender (./undecodable.ts).
    const { approvals, steering, budget } = this;
    wf.setHandler(statusQuery, () => visibility.view());
    wf.setHandler(transcriptQuery, () => ctx.state.messages);
    wf.setHandler(configQuery, () => ctx.cfg);
    wf.setHandler(approveSignal, decodedSignal(trace, approveSignal, (approval) => approvals.approve(approval)));
    wf.setHandler(rejectSignal, decodedSignal(trace, rejectSignal, (rejection) => approvals.reject(rejection)));
    wf.setHandler(cancelSignal, decodedSignal(trace, cancelSignal, (request) => ctx.stop.cancel(request, ctx)));
    ctx.stop.watchCancellation();
    wf.setHandler(steerSignal, decodedSignal(trace, steerSignal, (steer) => steering.steerSignal(steer)));
    wf.setHandler(steerUpdate, (steer) => steering.steerUpdate(steer), { validator: decodedUpdate(steerUpdate, (steer) => steering.validateSteer(steer)) });
    wf.setHandler(raiseBudgetUpdate, (raise) => budget.raise(raise), { validator: decodedUpdate(raiseBudgetUpdate, (raise) => budget.validateRaise(raise)) });
    wf.setHandler(reconcileUpdate, (answer) => reconciler.reconcile(answer), { validator: decodedUpdate(reconcileUpdate, (answer) => reconciler.validate(answer)) });
    wf.setHandler(decideUpdate, (decision) => approvals.decide(decision), { validator: decodedUpdate(decideUpdate, (decision) => approvals.validateDecide(decision)) });
  }

  async run(): Promise<RunResult> {
    const { ctx } = this;
    ctx.visibility.upsert();
    if (this.execution === 1) this.traceStart();
    let exit: Exit;
    try {
      exit = await ctx.stop.scope.run(() => this.loop());
    } catch (err) {
      if (err instanceof wf.ContinueAsNew) throw err;
      exit = exitForError(err, ctx.stop.reason);
    }
    // A Stop taken before the result is recorded wins over whatever the loop
    // reached meanwhile (a model answer or a failure that landed in the same
    // moment): the person asked the run to stop, and it says so.
    if (ctx.stop.stopped && !isCancelledExit(exit)) {
      ctx.trace.emit('stop_prevailed', { over: exit.status, overReason: exit.reason });
      exit = ctx.stop.exit();
    }
    return this.finish(exit);
  }

  // Promises on the every-turn path are kept few on purpose. The SDK's promise
  // hook records a stack for every promise workflow code makes (for the
  // stack-trace query): ~70 µs each on this project's bench machine, and each
  // async function and each `await` is one. So a step that waits only
  // sometimes (continuing as new, a summary) is checked first and awaited only
  // when it waits, and thin wrappers on the model and tool call chains `.then`
  // or `.catch` instead of awaiting (reports/turn-account.md).
  private async loop(): Promise<Exit> {
    const { ctx } = this;
    for (;;) {
      // After a Stop nothing new starts: a call still pending stays pending
      // (a resume asks for it again), and no model call is made.
      if (ctx.stop.stopped) return ctx.stop.exit();
      const step = nextStep(ctx.state, ctx.cfg);
      if (step.kind === 'drain') {
        const stop = await this.tools.handle(step.pending);
        if (stop) return stop;
        continue;
      }
      if (step.kind === 'stop') return step.exit;
      // The turn boundary: every call of the last reply has its result.
      if (continueAsNewDue(ctx, ctx.state.turns - this.turnsAtStart)) await continueAsNew({ ctx, approvals: this.approvals, steering: this.steering, executions: this.execution });
      ctx.stream.turnBoundary();
      this.steering.applyDue();
      const summary = fitContextWindow(ctx);
      if (summary) {
        const overBudget = await summarizeOldTurns(ctx, this.budget, summary);
        if (overBudget) return overBudget;
      }
      ctx.visibility.showDetails();
      const { exit } = await this.modelTurn.takeTurn(this.toolDefs);
      // A message sent before this answer is read before the run ends (when no limit stops it first).
      if (exit?.status === 'completed' && this.steering.hasDue() && nextStep(ctx.state, ctx.cfg).kind === 'ask') continue;
      if (exit) return exit;
    }
  }

  private traceStart(): void {
    const { cfg, state, ids } = this.ctx;
    this.ctx.trace.emit('run_started', {
      model: cfg.model,
      maxTurns: cfg.maxTurns,
      maxBudgetUsd: cfg.maxBudgetUsd,
      ...(cfg.hardBudget ? { budgetMode: 'hard', ...cfg.hardBudget } : {}),
      chainId: ids.chainId,
      ...(cfg.resumeFrom ? { resumedFrom: cfg.resumeFrom, turns: state.turns, costUsd: state.costUsd } : {}),
      ...(cfg.forkFrom ? { forkedFrom: cfg.forkFrom, turns: state.turns } : {}),
      ...this.ctx.visibility.definition,
    });
  }

  private async finish(exit: Exit): Promise<RunResult> {
    const { ctx } = this;
    ctx.visibility.end(exit);
    this.approvals.close();
    this.steering.dropAll(exit);
    ctx.visibility.upsert(exit);
    ctx.metrics.runs.add(1, { status: exit.status, error_type: exit.status === 'failed' ? exit.errorType : '' });
    ctx.trace.emit('run_stopped', { status: exit.status, reason: exit.reason, turns: ctx.state.turns, costUsd: ctx.state.costUsd });
    // A reader between two polls that has not read run_stopped yet comes
    // back for it (bounded: RunStream.drainReaders); then an in-flight
    // `decide` update, and a poll waiting for more, answer before the run closes.
    await wf.CancellationScope.nonCancellable(() => ctx.stream.drainReaders());
    ctx.stream.detach();
    await wf.CancellationScope.nonCancellable(() => this.approvals.settleHandlers());
    const result: RunResult = { ...runResult(ctx.ids.workflowId, exit, ctx.state), ...this.budget.fields(), ...(ctx.cfg.forkFrom ? { forkedFrom: ctx.cfg.forkFrom } : {}), ...ctx.visibility.definition };
    // The ops setting failedRunsFailWorkflow: a failed run fails its workflow, carrying its result,
    // so Temporal's own failure tooling (ExecutionStatus="Failed", failure alerts) sees it.
    if (exit.status === 'failed' && ctx.cfg.failedRunsFailWorkflow === true) {
      throw ApplicationFailure.create({ type: AGENT_RUN_FAILED, message: `run failed (${exit.errorType}): ${exit.reason}`, nonRetryable: true, details: [result] });
    }
    return result;
  }
}
