// The tool activity: validates the arguments against the tool's JSON schema,
// runs the tool confined to the run's workspace, stops it when the run is
// stopped (at once when the loop runs in this process, else at its next
// heartbeat), and turns the tool's own failures into an outcome the loop
// writes into the transcript. Only infrastructure faults throw (and are
// retried by Temporal). A write (neither read-only nor idempotent) runs inside
// the effect protocol (activities/effects/protocol.ts): claimed before it
// acts, recorded after, never done blind a second time.
import { LivePublisher } from '../live-stream.js';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { argumentProblem } from '../../common/tool-args.js';
import { capToolResult, toolMessage } from '../../common/transcript-text.js';
import type { MessageStore } from '../message-store.js';
import type { ToolOutcome } from '../../common/contract.js';
import type { TraceWriter } from '../trace-file.js';
import { FolderEffectStore } from '../effects/folder-store.js';
import { runWrite, safetyMarginMs, type EffectNote, type WriteOutcome } from '../effects/protocol.js';
import type { EffectStore } from '../effects/record.js';
import type { ToolContext } from './context.js';
import { NothingChanged, ToolError } from './tool-error.js';
import type { Toolset } from './toolset.js';
import { ensureWorkspace, NO_SEED_FILES } from './workspace.js';
import { approvalGuard, resolvedApprovalProblem, workspaceFiles } from './files.js';
import type { HeldLine, RunToolInput, RunToolResult } from '../../common/activity-contract.js';
import { heartbeatEvery } from '../../node/heartbeat.js';
import { RunningCalls } from '../running-calls.js';
import { RunContexts } from '../run-contexts.js';

/** This process as Temporal names workers (the SDK's default identity): it goes into every claim. */
export const WORKER_IDENTITY = `${process.pid}@${hostname()}`;

/** At most this many lines, and characters of them (JSON), held for the result; past either they go out live (a signal a batch). */
const MAX_HELD_LINES = 100;
const MAX_HELD_CHARS = 64_000;

/** A claim's lease when the activity has no heartbeat timeout (tool activities always have one). */
const DEFAULT_LEASE_MS = 30_000;

export interface ToolDeps {
  workspaceRoot: string;
  trace: TraceWriter;
  /** How often the tool heartbeats while it runs, in ms (default node/heartbeat.ts). */
  heartbeatEveryMs?: number;
  /** The calls a Stop taken by a loop in this process aborts at once (default: a registry of its own). */
  calls?: RunningCalls;
  /**
   * The effect ledger of write tools (default: a folder store in
   * AGENT_WORKSPACE/.ledger). Every worker that may retry a write must reach
   * the same ledger: with workers on several hosts, a PostgreSQL store
   * (AGENT_LEDGER_URL; see docs/effects.md).
   */
  effects?: EffectStore;
  /** Where the result is filed as the tool message, so the next prompt sends it by address. */
  messageStore?: MessageStore;
  /** Publish tool progress on the run's live stream too (../live-stream.ts); a tool that reports none costs nothing. */
  liveProgress?: boolean;
  /** The files a new workspace starts with (default: none; AgentPlugin's `seedFiles`). */
  seedFiles?: Readonly<Record<string, string>>;
  /** The run contexts this worker knows (default: a cache of its own, which asks each run on a miss). */
  runContexts?: RunContexts;
}

export interface RunToolDeps extends ToolDeps {
  /** The tools this worker offers. */
  toolset: Toolset;
}

export function createRunTool(deps: RunToolDeps) {
  const execute = createToolExecution(deps);
  return async function runTool(input: RunToolInput): Promise<RunToolResult> {
    return execute(input, null);
  };
}

/**
 * Runs one call inside the current activity, as the tool activity would.
 * `readAhead` (the signal that ends its time): inside the model activity, for a read-only call of the reply
 * the workflow has not seen yet (activities/model.ts): no heartbeat (the
 * model activity's details are not the tool's), no live-stream progress (the
 * run has not announced the call yet), its `tool_exec` line marked
 * `readAhead`, and its failures thrown as they are (the model activity drops
 * the read-ahead then, and the workflow runs the call itself).
 */
export function createToolExecution(deps: RunToolDeps): (input: RunToolInput, readAhead: AbortSignal | null) => Promise<RunToolResult> {
  const effects = deps.effects ?? new FolderEffectStore(join(deps.workspaceRoot, '.ledger'));
  const calls = deps.calls ?? new RunningCalls();
  const contexts = deps.runContexts ?? new RunContexts();
  const { toolset } = deps;

  return async function execute(input: RunToolInput, readAhead: AbortSignal | null): Promise<RunToolResult> {
    const tool = toolset.runnable(input.toolName);
    // The run recorded a tool this worker does not offer: in a rolling deploy,
    // another worker of the queue may offer it, so the attempt fails and is
    // retried (on any worker); when every attempt found none, the run fails
    // with this type, not silently.
    if (!tool) {
      throw ApplicationFailure.retryable(`tool ${input.toolName} is not offered by worker ${process.pid} (it offers ${toolset.names().join(', ')})`, 'ToolNotOffered');
    }
    const problem = argumentProblem(tool, input.args);
    if (problem) return { ok: false, error: problem, permanent: false };

    const activity = Context.current();
    const { info } = activity;
    const attempt = info.attempt;
    // Past this the attempt starts nothing: Temporal times it out a little later (its clock started first).
    const timeouts = [Date.now() + info.startToCloseTimeoutMs, ...(info.scheduleToCloseTimeoutMs > 0 ? [info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs] : [])];
    const deadline = Math.min(...timeouts) - safetyMarginMs(info.startToCloseTimeoutMs);
    // Progress heartbeated by an earlier attempt (a worker that died mid-tool).
    const prior = readAhead ? undefined : (activity.info.heartbeatDetails as { step?: unknown } | undefined);
    const resumeFromStep = typeof prior?.step === 'number' ? prior.step : 0;
    let step = resumeFromStep;
    // Every execution of a tool is on record, retries included.
    deps.trace.write(input.workflowId, input.chainId, {
      seq: input.traceSeq,
      type: 'tool_exec',
      attempt,
      step: 0,
      toolName: input.toolName,
      callId: input.callId,
      // Which worker process ran it: a run can span several.
      pid: process.pid,
      ...(resumeFromStep ? { resumeFromStep } : {}),
      ...(readAhead ? { readAhead: true } : {}),
    });
    let lastLabel: string | null = null;
    // Made at the first progress: a tool that reports none sends no signal.
    const live: { publisher?: LivePublisher } = {};
    // Nobody watched when the call was sent: its lines go back with the result
    // (the workflow publishes them, no signal), up to a bound; past it, and
    // when the attempt throws, they go out live as a watched call's do.
    let held: HeldLine[] | null = input.watched === false ? [] : null;
    let heldChars = 0;
    const sendLive = (line: HeldLine) => (live.publisher ??= new LivePublisher()).line(line);
    const goLive = () => {
      const lines = held ?? [];
      held = null;
      lines.forEach(sendLive);
    };
    const publish = (line: HeldLine) => {
      if (!deps.liveProgress || readAhead) return;
      if (!held) return sendLive(line);
      held.push(line);
      heldChars += JSON.stringify(line).length;
      if (held.length > MAX_HELD_LINES || heldChars > MAX_HELD_CHARS) goLive();
    };
    const withHeld = (outcome: ToolOutcome): RunToolResult => (held?.length ? { ...outcome, heldLines: held } : outcome);
    const root = ensureWorkspace(deps.workspaceRoot, input.workspace, deps.seedFiles ?? NO_SEED_FILES);
    // The workflow judged the approval rule on the paths as written; here they
    // are resolved and judged again, before anything is claimed or run.
    const unasked = resolvedApprovalProblem(root, input.toolName, tool.needsApproval ?? false, input.args);
    if (unasked) return { ok: false, error: unasked, permanent: false };
    // Before the call is entered: a context this worker cannot get fails the attempt (retried), the tool never runs without it.
    const runContext = input.runContextKey === undefined ? {} : await contexts.get(input.workflowId, input.runContextKey);
    const entered = calls.enter(activity);
    // A read-ahead also stops when its time is up (activities/read-ahead.ts).
    const call = readAhead ? { ...entered, signal: AbortSignal.any([entered.signal, readAhead]) } : entered;
    // Heartbeat on a timer, not only on progress: the heartbeat's answer is how
    // a Stop taken by a loop in another process reaches this one. The worker
    // throttles them to one per interval; progress between two carries the
    // latest step. A local activity (a fast read-only tool) has no heartbeat:
    // its cancellation comes straight from the worker that runs the loop.
    const beat = (details: { step: number; label: string | null }) => {
      if (!activity.info.isLocal && !readAhead) activity.heartbeat(details);
    };
    const ticker = setInterval(() => beat({ step, label: lastLabel }), heartbeatEvery(deps.heartbeatEveryMs, activity.info.heartbeatTimeoutMs));
    const ctx: ToolContext = {
      root,
      // Sealed for this call: a change it makes is judged against the approval it got (./files.ts approvalGuard).
      files: workspaceFiles(root, { mayChange: approvalGuard(tool.needsApproval ?? false, input.args) }),
      idempotencyKey: input.idempotencyKey,
      effect: { confirm: async () => {} },
      deadline,
      signal: call.signal,
      sleep: call.sleep,
      resumeFromStep,
      // Empty in production: a test holds a write here by wrapping the tool (test/helpers/faults.ts).
      hooks: {},
      run: { workflowId: input.workflowId, context: runContext },
      progress: (label) => {
        if (call.signal.aborted) return;
        step += 1;
        lastLabel = label;
        beat({ step, label });
        const line = { seq: input.traceSeq, step, attempt, type: 'tool_progress', toolName: input.toolName, callId: input.callId, label };
        deps.trace.write(input.workflowId, input.chainId, line);
        publish(line);
      },
    };
    // The moment the Stop reached the tool, on record (the benchmark measures it).
    const onAbort = () =>
      deps.trace.write(input.workflowId, input.chainId, { seq: input.traceSeq, step: 0, attempt, type: 'tool_cancelled', toolName: input.toolName, callId: input.callId });
    call.signal.addEventListener('abort', onAbort, { once: true });
    const write = !tool.readOnly && !tool.idempotent;
    const note = (n: EffectNote) => {
      const line = { seq: input.traceSeq, step: 0, attempt, type: 'effect', toolName: input.toolName, callId: input.callId, ...n };
      deps.trace.write(input.workflowId, input.chainId, line);
      publish(line);
    };
    try {
      const outcome: WriteOutcome = write
        ? await runWrite(
            {
              store: effects,
              key: input.idempotencyKey,
              toolName: input.toolName,
              attempt: { workflowId: info.workflowExecution?.workflowId ?? input.workflowId, namespace: info.workflowNamespace, runId: info.workflowExecution?.runId ?? '', attempt, worker: WORKER_IDENTITY },
              deadline,
              leaseMs: info.heartbeatTimeoutMs || DEFAULT_LEASE_MS,
              signal: call.signal,
              pastTense: tool.pastTense,
              retryUnknown: input.retryUnknown === true,
              note,
            },
            async (effect) => capToolResult(await tool.run({ ...ctx, effect }, input.args), input.maxResultChars),
          )
        : await runRead(() => tool.run(ctx, input.args), input.maxResultChars);
      if (!outcome.ok) return withHeld(outcome);
      // Filed as the message the workflow will build from it (it checks the address before relying on it).
      // A store that cannot take it only costs the next prompt carrying it whole.
      const ref = await deps.messageStore?.put(JSON.stringify(toolMessage(input.callId, input.toolName, outcome.content))).catch(() => undefined);
      return withHeld({ ...outcome, ...(ref ? { ref } : {}) });
    } catch (err) {
      // No result carries them: what the attempt wrote goes out now, before its failure reaches the run.
      goLive();
      // A Stop taken in this process is reported by the call itself (activities/running-calls.ts);
      // a read-ahead's is the model activity's to report, with the reply it already has.
      throw readAhead ? err : call.outcome(err);
    } finally {
      clearInterval(ticker);
      call.signal.removeEventListener('abort', onAbort);
      entered.release();
      // Before the result reaches the run: its progress comes first on the stream.
      await live.publisher?.close();
    }
  };
}

/** A read-only or idempotent tool: its errors are the model's (ToolError) or Temporal's to retry. */
async function runRead(run: () => Promise<string>, maxResultChars: number): Promise<WriteOutcome> {
  try {
    return { ok: true, content: capToolResult(await run(), maxResultChars) };
  } catch (err) {
    const e = err instanceof NothingChanged ? err.reason : err;
    if (e instanceof ToolError) return { ok: false, error: e.message, permanent: e.permanent };
    throw e;
  }
}
