// How a run starts: the patches asked in its first activation, its
// configuration resolved once (a local activity, recorded in history), the
// stopped run it resumes, and what the status query answers meanwhile.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentActivities as Activities, LoadedRun, ResolvedConfig } from '../common/activity-contract.js';
import type { AgentInput, RunConfig, RunStatusView } from '../common/contract.js';
import type { CarriedState } from './carried-state.js';
import { InputError, parseInput } from '../common/input.js';
import { resolvedConfigPatched, type Patches } from './patches.js';
import { noChildren } from './run-state.js';
import { AGENT_ERROR_TYPE, AGENT_EXIT_REASON, AGENT_STATUS } from '../common/search-attributes.js';
import { searchableText } from './visibility.js';

const resumeActivity = wf.proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 3 } });

/** The stopped run's input, result and transcript; a non-retryable failure naming why when it cannot be resumed. */
export async function loadPriorRun(workflowId: string): Promise<Extract<LoadedRun, { ok: true }>> {
  const loaded = await resumeActivity.loadRun({ workflowId });
  if (!loaded.ok) throw ApplicationFailure.create({ type: 'ResumeRefused', message: `cannot resume: ${loaded.reason}`, nonRetryable: true });
  return loaded;
}

/**
 * Fills the input's gaps with the worker's defaults in a local activity, so the
 * answer is recorded in history. Histories recorded before this existed
 * resolved the input in workflow code: they replay that way.
 */
export async function resolveConfig(input: AgentInput, patches: Patches): Promise<RunConfig> {
  let resolved: ResolvedConfig;
  if (resolvedConfigPatched(patches)) {
    resolved = await configActivity.resolveConfig(input);
  } else {
    try {
      resolved = { ok: true, cfg: parseInput(input) };
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      resolved = { ok: false, field: err.field, message: err.message };
    }
  }
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
    { key: AGENT_ERROR_TYPE, value: errorType },
    { key: AGENT_EXIT_REASON, value: searchableText(err.message) },
  ]);
}
