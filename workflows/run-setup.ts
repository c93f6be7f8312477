// How a run starts: the patches asked in its first activation, its
// configuration resolved once (a local activity, recorded in history), the
// stopped run it resumes, and what the status query answers meanwhile.
import * as wf from '@temporalio/workflow';
import { WAIT_CANCELLATION_PATCH } from './activity-options.js';
import { MESSAGE_REFS_PATCH } from '../common/message-refs.js';
import { PENDING_ARGS_HASH_PATCH } from './visibility.js';
import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentActivities as Activities, LoadedRun, ResolvedConfig } from '../common/activity-contract.js';
import type { AgentInput, RunConfig, RunStatusView } from '../common/contract.js';
import type { CarriedState } from './carried-state.js';
import { InputError, parseInput } from '../common/input.js';
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
  if (patches.all || wf.patched(RESOLVED_CONFIG_PATCH)) {
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

const RESOLVED_CONFIG_PATCH = 'resolved-config-v1';

/** The patches asked in a run's first activation (see agentRun). */
export interface Patches {
  /** patched(ALL_PATCHES_V2): every patch the project has, including those asked later in a run, holds; none is asked. */
  allV2: boolean;
  /** patched(ALL_PATCHES): every patch of this file holds, none of them asked (./run-setup.ts askPatches). */
  all: boolean;
  waitForCancellation: boolean;
  /** Model calls send stored messages by address (./message-refs). */
  messageRefs: boolean;
  /** The dedupe cache drops its oldest results past MAX_CACHE_CHARS. */
  boundedCache: boolean;
  /** Signals and updates are applied after the activation's other jobs (AgentRun.receive). */
  deferredSignals: boolean;
  /** The AgentPendingArgsHash search attribute joins every status upsert (./visibility). */
  pendingArgsHash: boolean;
}
export const DEFERRED_SIGNALS_PATCH = 'deferred-signals-v1';
export const BOUNDED_CACHE_PATCH = 'bounded-cache-v1';
export const LOCAL_TOOLS_PATCH = 'local-read-tools-v1';

/**
 * Stands for every patch before it. Each patch asked in a run that is not
 * replaying writes a marker and a `TemporalChangeVersion` upsert to its
 * history: six patches cost a new run twelve events for branches only old
 * histories take. A run that records this one marker takes every new branch
 * and asks no other patch; a history recorded before it has no such marker,
 * so its replay finds this false and asks each patch where it always did.
 * A patch added after it is asked on its own, never implied by this one.
 */
export const ALL_PATCHES = 'all-patches-v1';

/**
 * Stands for every patch the project has: ALL_PATCHES and what it stands for,
 * and the three asked on their own after it (pending-args-hash-v1 here,
 * continue-as-new-v1 when a run first continues as new, refused-calls-traced-v1
 * at a refused call), and the one branch that needs no patch of its own:
 * model calls file each prompt's list of message addresses as a chain node
 * (common/message-refs.ts chainNode), not whole. A new run writes this one marker (and the SDK's one
 * `TemporalChangeVersion` upsert) where it wrote two, and never another one
 * later. A history recorded before it has no such marker: its replay finds
 * this false and asks what it always asked, where it asked it.
 */
export const ALL_PATCHES_V2 = 'all-patches-v2';

/** What a run that recorded ALL_PATCHES_V2 takes: every branch, no patch asked. */
const EVERY_PATCH: Patches = { allV2: true, all: true, waitForCancellation: true, messageRefs: true, boundedCache: true, deferredSignals: true, pendingArgsHash: true };

/**
 * The patches of a run's first activation: for a new run, the one marker of
 * ALL_PATCHES_V2; for a history recorded before it, the markers it has (one
 * for ALL_PATCHES and one for pending-args-hash-v1, or the six before
 * ALL_PATCHES). Call it first, before anything awaits, as agentRun always
 * asked them.
 */
export function askPatches(): Patches {
  if (wf.patched(ALL_PATCHES_V2)) return EVERY_PATCH;
  const before: Omit<Patches, 'pendingArgsHash'> = wf.patched(ALL_PATCHES)
    ? { allV2: false, all: true, waitForCancellation: true, messageRefs: true, boundedCache: true, deferredSignals: true }
    : {
        allV2: false,
        all: false,
        waitForCancellation: wf.patched(WAIT_CANCELLATION_PATCH),
        messageRefs: wf.patched(MESSAGE_REFS_PATCH),
        boundedCache: wf.patched(BOUNDED_CACHE_PATCH),
        deferredSignals: wf.patched(DEFERRED_SIGNALS_PATCH),
      };
  // Added after ALL_PATCHES: asked on its own, whatever ALL_PATCHES says (a
  // history with that marker but recorded before this patch replays without it).
  return { ...before, pendingArgsHash: wf.patched(PENDING_ARGS_HASH_PATCH) };
}

/** Whether a read-only tool marked `local` runs as a local activity: asked at its first call in histories from before ALL_PATCHES. */
export function localToolsPatched(patches: Patches): boolean {
  return patches.all || wf.patched(LOCAL_TOOLS_PATCH);
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
