// A run's start, before its loop, in the order it happens: the status and
// transcript queries answered meanwhile, the
// source of a resume or a fork loaded and the configuration resolved once
// (activities, recorded in history) as the pure plan of ./start-plan.ts says,
// the state it starts from (or the previous execution's, ./carried-state.ts),
// and its ids. Until the loop's handlers are set, the status query answers a
// starting view; a run that fails here says so in its status and search
// attributes.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentActivities as Activities } from '../common/activity-contract.js';
import type { AgentInput, RunConfig, RunStatusView } from '../common/contract.js';
import { statusQuery, transcriptQuery } from '../common/run-messages.js';
import { AGENT_ERROR_TYPE, AGENT_EXIT_REASON, AGENT_STATUS } from '../common/search-attributes.js';
import type { CarriedState, LoopStart } from './carried-state.js';
import type { RunIds } from './run-context.js';
import { noChildren } from './run-state.js';
import { resolveStart, sourceOf, type Source, type SourceRequest } from './start-plan.js';
import { traceSinks } from './trace.js';
import { searchableText } from './visibility.js';
import { boundedKeyword } from '../common/bounds.js';
import { runsCounter } from './loop-metrics.js';
import type { MetricCounter } from '@temporalio/common';

export interface RunStart {
  ids: RunIds;
  cfg: RunConfig;
  /** What the loop starts from: the previous execution's hand-over, or a fresh, resumed or forked run's first state. */
  from: LoopStart;
}

/**
 * `carried`: the previous execution's state, already upgraded and checked
 * (./carried-state.ts upgradeCarried, called by agentRun before the stream is
 * built), or the failure that reading it raised: thrown here, so the run
 * fails at start like any refused input, its status and search attributes saying so.
 */
export async function startRun(input: AgentInput, carried: CarriedState | ApplicationFailure | undefined): Promise<RunStart> {
  const info = wf.workflowInfo();
  const kept = carried instanceof ApplicationFailure ? undefined : carried;
  // Queries are not buffered like signals: answer them while the
  // configuration is being resolved, before the run replaces these handlers.
  const starting = startingView(info.workflowId, kept);
  wf.setHandler(statusQuery, () => starting);
  wf.setHandler(transcriptQuery, () => kept?.state.messages ?? []);
  let begun: Pick<RunStart, 'cfg' | 'from'>;
  try {
    if (carried instanceof ApplicationFailure) throw carried;
    // Resolved once per run and carried from execution to execution: a new
    // default on a new worker never changes a run already under way.
    if (carried) begun = { cfg: carried.cfg, from: carried };
    else {
      // Checked before the input is encoded for any activity (start-plan.ts sourceOf). A
      // continued execution's input needs no check: the worker's codec that could not
      // decode it could not decode the carried state beside it either (upgradeCarried refuses that).
      const plan = resolveStart(input, await loadSource(sourceOf(input)));
      begun = plan.begin(await resolveConfig(plan.resolve));
    }
  } catch (err) {
    // Bad input or a refused resume fails the run at once: its status says so, like its search attributes.
    if (err instanceof ApplicationFailure) {
      failedAtStart(starting, err);
      // Counted with the runs that ended (agent_runs), as the loop counts its exits: an alert on failed runs sees bad input too.
      refusedRunsCounter(input).add(1, { status: 'failed', error_type: err.type ?? 'ApplicationFailure' });
      // And its trace, in a line of its own (a sink call, not a command: replays are unchanged).
      const chainId = info.runId !== info.originalExecutionRunId ? info.runId : (kept?.chainId ?? info.firstExecutionRunId);
      traceSinks.trace.event({ seq: (kept?.seq ?? 0) + 1, type: 'run_stopped', status: 'failed', reason: err.message, errorType: err.type ?? 'ApplicationFailure', turns: kept?.state.turns ?? 0, costUsd: kept?.state.costUsd ?? 0 }, chainId);
    }
    throw err;
  }
  const ids: RunIds = {
    workflowId: info.workflowId,
    // A reset run replays an earlier run's history up to the reset point, yet
    // is a run of its own: its trace chain is named by its own run id (the
    // server keeps the earlier run's firstExecutionRunId for it and for what
    // it continues as new), and carried from execution to execution. Any
    // other run: its first execution's run id.
    chainId: info.runId !== info.originalExecutionRunId ? info.runId : (kept?.chainId ?? info.firstExecutionRunId),
    // Effects are keyed by the first execution's run id, which a reset keeps:
    // a reset run's write finds what an earlier run of the workflow did and
    // says so ("already deleted by run R at T"), never acts or reports it twice.
    effectsChainId: info.firstExecutionRunId,
  };
  return { ids, ...begun };
}

// --- the source of a resume or a fork, read in an activity (a fork from an
// exported file carries its transcript in the input: nothing to load). No
// tool and no model call of the inherited turns is made again.

const sourceActivity = wf.proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 3 } });

async function loadSource(request: SourceRequest): Promise<Source> {
  if (request.kind === 'resume') return { ...request, loaded: await sourceActivity.loadRun({ workflowId: request.workflowId }) };
  if (request.kind === 'fork' && !request.fork.transcript) {
    const { run, runId, atTurn } = request.fork;
    return { ...request, loaded: await sourceActivity.loadForkSource({ run: run as string, ...(runId ? { runId } : {}), atTurn }) };
  }
  return request.kind === 'fork' ? { ...request, loaded: null } : request;
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

/** agent_runs for a run refused before its loop: tagged with the input's model when it names one (bounded), as the loop's metrics are. */
function refusedRunsCounter(input: unknown): MetricCounter {
  const model = (input as { model?: unknown } | null)?.model;
  return runsCounter(typeof model === 'string' && model.length <= 100 ? model : '');
}
