// A run's start, before its loop, in the order it happens: the status and
// transcript queries answered meanwhile, the
// configuration resolved once (a local activity, recorded in history) from
// the input, or from the stopped run it resumes, or from the run it forks,
// its definition compared with its source's, the state it starts from, and
// its ids. Until the loop's handlers are set, the status query answers a
// starting view; a run that fails here says so in its status and search
// attributes.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentActivities as Activities, LoadedRun } from '../common/activity-contract.js';
import type { AgentInput, ChatMessage, ForkOrigin, ForkRequest, RunConfig, RunStatusView } from '../common/contract.js';
import { definitionChanges, definitionSource, unaskedChanges } from '../common/definition.js';
import { costOfTurns, cutAtTurn } from '../common/fork.js';
import { parseForkFrom } from '../common/fork-input.js';
import { InputError, inputShapeProblem } from '../common/input.js';
import { inputOfConfig, resumedInput } from '../common/resume-input.js';
import { statusQuery, transcriptQuery } from '../common/run-messages.js';
import { AGENT_ERROR_TYPE, AGENT_EXIT_REASON, AGENT_STATUS } from '../common/search-attributes.js';
import { startedFrom, type CarriedState } from './continue-as-new.js';
import type { RunIds } from './run-context.js';
import { noChildren, stateOf, type RunState } from './run-state.js';
import { traceSinks } from './trace.js';
import { searchableText } from './visibility.js';
import { boundedKeyword } from '../common/bounds.js';
import { unreadableProblem } from '../common/undecodable.js';
import { runsCounter } from './telemetry.js';
import type { MetricCounter } from '@temporalio/common';

export interface RunStart {
  ids: RunIds;
  cfg: RunConfig;
  /** What the run starts from: the previous execution's state, a resumed or forked run's, or nothing (a fresh run). */
  carried: CarriedState | undefined;
}

export async function startRun(input: AgentInput, carried: CarriedState | undefined): Promise<RunStart> {
  const info = wf.workflowInfo();
  // Queries are not buffered like signals: answer them while the
  // configuration is being resolved, before the run replaces these handlers.
  const starting = startingView(info.workflowId, carried);
  wf.setHandler(statusQuery, () => starting);
  wf.setHandler(transcriptQuery, () => carried?.state.messages ?? []);
  // A run that continues a stopped one starts from its transcript and totals.
  let prior: Awaited<ReturnType<typeof loadPriorRun>> | null = null;
  // A fork starts from another run's first turns (startFork, below).
  let fork: ForkStart | null = null;
  let cfg: RunConfig;
  try {
    refuseUndecodable(input, carried);
    // Then, before the input is encoded for any activity: that encoding
    // turns Infinity (`1e400` in `temporal workflow start --input`) into
    // null, which would lift a limit instead of being refused, and a value
    // nested thousands deep overflows it, failing every workflow task.
    if (!carried) refuseBadShape(input);
    fork = !carried && wantsFork(input) ? await startFork(input) : null;
    prior = !carried && !fork && typeof input?.resumeFrom === 'string' ? await loadPriorRun(input.resumeFrom) : null;
    // Resolved once per run and carried from execution to execution: a new
    // default on a new worker never changes a run already under way.
    cfg = carried?.cfg ?? (await resolveConfig(prior ? resumedInput(prior.config ? inputOfConfig(prior.config) : prior.input, input) : (fork?.input ?? input)));
    if (fork) cfg = { ...cfg, forkFrom: fork.origin };
    // What the definition of the run it continues was, and what moved (checkDefinition, below).
    const source = carried ? null : (prior?.config ?? fork?.sourceConfig ?? null);
    if (source) cfg = checkDefinition(cfg, source, input, prior ? `resume of ${input.resumeFrom}` : `fork of ${fork?.origin.run ?? 'the source'}`);
  } catch (err) {
    // Bad input or a refused resume fails the run at once: its status says so, like its search attributes.
    if (err instanceof ApplicationFailure) {
      failedAtStart(starting, err);
      // Counted with the runs that ended (agent_runs), as the loop counts its exits: an alert on failed runs sees bad input too.
      refusedRunsCounter(input).add(1, { status: 'failed', error_type: err.type ?? 'ApplicationFailure' });
      // And its trace, in a line of its own (a sink call, not a command: replays are unchanged).
      const chainId = info.runId !== info.originalExecutionRunId ? info.runId : (carried?.chainId ?? info.firstExecutionRunId);
      traceSinks.trace.event({ seq: (carried?.seq ?? 0) + 1, type: 'run_stopped', status: 'failed', reason: err.message, errorType: err.type ?? 'ApplicationFailure', turns: carried?.state.turns ?? 0, costUsd: carried?.state.costUsd ?? 0 }, chainId);
    }
    throw err;
  }
  const resumed = prior ? startedFrom(cfg, stateOf(prior)) : fork ? startedFrom(cfg, forkState(fork)) : undefined;
  const ids: RunIds = {
    workflowId: info.workflowId,
    // A reset run replays an earlier run's history up to the reset point, yet
    // is a run of its own: its trace chain is named by its own run id (the
    // server keeps the earlier run's firstExecutionRunId for it and for what
    // it continues as new), and carried from execution to execution. Any
    // other run: its first execution's run id.
    chainId: info.runId !== info.originalExecutionRunId ? info.runId : (carried?.chainId ?? info.firstExecutionRunId),
    // Effects are keyed by the first execution's run id, which a reset keeps:
    // a reset run's write finds what an earlier run of the workflow did and
    // says so ("already deleted by run R at T"), never acts or reports it twice.
    effectsChainId: info.firstExecutionRunId,
  };
  return { ids, cfg, carried: carried ?? resumed };
}

/**
 * A start or continue-as-new input the worker could not decode
 * (common/undecodable.ts), or a binary one, fails the run at once, naming
 * why, like any bad input: it never reaches the configuration or the state
 * as a stand-in.
 */
function refuseUndecodable(input: AgentInput, carried: CarriedState | undefined): void {
  const problem = unreadableProblem(input, 'start input') ?? unreadableProblem(carried, 'continue-as-new input');
  if (problem) throw ApplicationFailure.create({ type: 'InvalidInput', message: problem, nonRetryable: true, details: [{ field: 'input' }] });
}

// --- a resume: the stopped run it continues, the configuration

const resumeActivity = wf.proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 3 } });

/** The stopped run's input, result and transcript; a non-retryable failure naming why when it cannot be resumed. */
export async function loadPriorRun(workflowId: string): Promise<Extract<LoadedRun, { ok: true }>> {
  const loaded = await resumeActivity.loadRun({ workflowId });
  if (!loaded.ok) throw ApplicationFailure.create({ type: 'ResumeRefused', message: `cannot resume: ${loaded.reason}`, nonRetryable: true });
  return loaded;
}

/**
 * Fills the input's gaps with the worker's defaults in a local activity, so the
 * answer is recorded in history: a new default on a new worker never changes
 * what a replay resolves.
 */
export async function resolveConfig(input: AgentInput): Promise<RunConfig> {
  const resolved = await configActivity.resolveConfig(input);
  if (resolved.ok) return resolved.cfg;
  // Non-retryable: bad input fails the run at once, naming the field.
  throw ApplicationFailure.create({ type: 'InvalidInput', message: resolved.message, nonRetryable: true, details: [{ field: resolved.field }] });
}

/** An input no field of which JSON can carry as given: a non-retryable InvalidInput naming the field. */
function refuseBadShape(input: unknown): void {
  const shape = inputShapeProblem(input);
  if (!shape) return;
  const err = new InputError(shape.field, shape.message);
  throw ApplicationFailure.create({ type: 'InvalidInput', message: err.message, nonRetryable: true, details: [{ field: err.field }] });
}

export function startingView(workflowId: string, carried: CarriedState | undefined): RunStatusView {
  const s = carried?.state;
  return {
    runId: workflowId,
    workflowId,
    status: 'running',
    agentStatus: 'running',
    reason: null,
    errorType: null,
    interruption: null,
    turns: s?.turns ?? 0,
    costUsd: s?.costUsd ?? 0,
    toolRuns: s?.toolRuns ?? 0,
    usage: { ...(s?.usage ?? { promptTokens: 0, completionTokens: 0 }) },
    usageEstimatedTurns: s?.usageEstimatedTurns ?? 0,
    children: s?.children ?? noChildren(),
    queuedSteers: [],
  };
}
const configActivity = wf.proxyLocalActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 5 },
});

/**
 * A run that fails before its loop starts (bad input, a refused resume): the
 * status query and the search attributes say failed, with the reason and its
 * type, as they would for a failure later on.
 */
export function failedAtStart(view: RunStatusView, err: ApplicationFailure): void {
  const errorType = err.type ?? 'ApplicationFailure';
  Object.assign(view, { status: 'failed', agentStatus: 'failed', reason: err.message, errorType });
  wf.upsertSearchAttributes([
    { key: AGENT_STATUS, value: 'failed' },
    { key: AGENT_ERROR_TYPE, value: boundedKeyword(errorType) },
    { key: AGENT_EXIT_REASON, value: searchableText(err.message) },
  ]);
}

// --- a fork (`forkFrom`, common/fork.ts): the source is read and cut in an
// activity (or, from an exported file, cut here), the source's configuration
// with the fork's own settings on top is resolved like any input, and the
// loop starts at turn atTurn + 1 with the cut transcript. No tool and no
// model call of the inherited turns is made again.

const forkActivity = wf.proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 3 } });

export interface ForkStart {
  /** The input to resolve: the source's, with the fork's settings on top; no forkFrom (its transcript would be recorded twice). */
  input: AgentInput;
  messages: ChatMessage[];
  origin: ForkOrigin;
  /** The source's resolved configuration (absent for an exported file, or a source that failed before its configuration was resolved): what the fork's definition is compared with. */
  sourceConfig?: RunConfig;
}

/** True for an input that asks for a fork (checked fully by startFork). */
export const wantsFork = (input: AgentInput | undefined): boolean => input?.forkFrom !== undefined && input.forkFrom !== null;

/** Loads and cuts the source; a non-retryable failure naming why when it cannot be forked. */
export async function startFork(input: AgentInput): Promise<ForkStart> {
  let req: ForkRequest | null;
  try {
    req = parseForkFrom(input as unknown as Record<string, unknown>);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    throw ApplicationFailure.create({ type: 'InvalidInput', message: err.message, nonRetryable: true, details: [{ field: err.field }] });
  }
  if (!req) throw ApplicationFailure.create({ type: 'InvalidInput', message: 'invalid input: forkFrom is missing', nonRetryable: true });
  const { forkFrom: _f, ...overrides } = input;
  const origin = (inheritedCostUsd: number | null, runId: string | null): ForkOrigin => ({
    run: req.run ?? null,
    runId,
    atTurn: req.atTurn,
    message: req.message ?? null,
    inheritedCostUsd,
    fromFile: req.transcript !== undefined,
  });
  if (req.transcript) {
    const cut = cutAtTurn(req.transcript, req.atTurn);
    if (!cut.ok) throw refused(`the transcript: ${cut.reason}`);
    // The file's configuration travels as the input itself (the CLI writes it there); its task is the transcript's.
    const task = overrides.task ?? req.transcript.find((m) => m.role === 'user')?.content ?? '';
    return { input: { ...overrides, task }, messages: cut.messages, origin: origin(req.turnCostsUsd ? costOfTurns(req.turnCostsUsd, req.atTurn) : null, null) };
  }
  const loaded = await forkActivity.loadForkSource({ run: req.run as string, ...(req.runId ? { runId: req.runId } : {}), atTurn: req.atTurn });
  if (!loaded.ok) throw refused(loaded.reason);
  // The source's whole configuration, so no worker default changes what it ran with; the fork's settings on top.
  const { resumeFrom: _r, forkFrom: _s, ...source } = loaded.config ? inputOfConfig(loaded.config) : loaded.input;
  return {
    input: resumedInput(source, { ...overrides, task: source.task }),
    messages: loaded.messages,
    origin: origin(loaded.inheritedCostUsd, loaded.runId),
    ...(loaded.config ? { sourceConfig: loaded.config } : {}),
  };
}

const refused = (why: string) => ApplicationFailure.create({ type: 'ForkRefused', message: `cannot fork: ${why}`, nonRetryable: true });

/**
 * The fork's first state. Turns count from atTurn, so a turn cap counts the
 * inherited turns (as a resume's does); tool runs, cost and usage are the
 * fork's own: what the source paid is in forkFrom.inheritedCostUsd. No
 * decision is carried (startedFrom): every call of the cut already has its result.
 */
export function forkState(fork: ForkStart): RunState {
  const messages = [...fork.messages];
  if (fork.origin.message !== null) messages.push({ role: 'user', content: fork.origin.message });
  const calls = messages.map((m) => (m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0));
  const lastCalls = [...calls].reverse().find((n) => n > 0) ?? 0;
  const callsProposed = calls.reduce((a, b) => a + b, 0);
  return {
    messages,
    turns: fork.origin.atTurn,
    toolRuns: 0,
    costUsd: 0,
    usage: { promptTokens: 0, completionTokens: 0 },
    promptTokensPerTurn: [],
    usageEstimatedTurns: 0,
    cache: {},
    children: noChildren(),
    callsProposed,
    lastReplyFirstCall: callsProposed - lastCalls + 1,
  };
}

// --- the definition: a resumed or forked run's against its source's, recorded
// in the configuration (carried through continue-as-new) and refused, when
// the worker says so, if it moved under the run. Computed from what history
// already holds (the resolved configuration and the source's, both activity
// results), so it adds no command. A configuration without definitionChange
// (one parsed without a worker's resolveConfig) is never refused.

export function checkDefinition(cfg: RunConfig, source: RunConfig, input: AgentInput, what: string): RunConfig {
  const from = definitionSource(source);
  const changed = definitionChanges(from, cfg);
  const unasked = unaskedChanges(changed, input);
  if (unasked.length && cfg.definitionChange === 'refuse' && input.acknowledgeDefinitionChange !== true) {
    throw ApplicationFailure.create({
      type: 'DefinitionChanged',
      message:
        `the ${what} would run on another definition than its source's: ${unasked.join(', ')} changed since it ran (not set by this input); ` +
        'start it with "acknowledgeDefinitionChange": true to continue anyway, or set AGENT_DEFINITION_CHANGE=allow on the worker',
      nonRetryable: true,
      details: [{ definitionChanged: changed }],
    });
  }
  return { ...cfg, definitionFrom: { hash: from.hash, changed } };
}

/** agent_runs for a run refused before its loop: tagged with the input's model when it names one (bounded), as the loop's metrics are. */
function refusedRunsCounter(input: unknown): MetricCounter {
  const model = (input as { model?: unknown } | null)?.model;
  return runsCounter(typeof model === 'string' && model.length <= 100 ? model : '');
}
