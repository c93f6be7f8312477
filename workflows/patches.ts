// Every patch id of the agentRun workflow, and where each is asked. A patch
// keeps a history recorded before a change replaying the way it ran: asked in
// a run that is not replaying, it writes a marker and takes the new branch; a
// replay of an older history finds no marker and takes the old one. Where and
// in which order a patch is asked must never move (a marker asked elsewhere
// breaks every history that has it), so each ask below is called from the one
// place it always was: askPatches first, before anything awaits (startRun),
// the others at the branch they guard, named in their comment.
import * as wf from '@temporalio/workflow';

/** Activities are cancelled with WAIT_CANCELLATION_COMPLETED: histories recorded before it sent TRY_CANCEL, and their runs closed without the activity's acknowledgement. */
export const WAIT_CANCELLATION_PATCH = 'wait-cancellation-v1';
/** Model calls send stored messages by address: histories recorded before refs existed sent every message inline. */
export const MESSAGE_REFS_PATCH = 'message-refs-v1';
/** The dedupe cache drops its oldest results past MAX_CACHE_CHARS. */
export const BOUNDED_CACHE_PATCH = 'bounded-cache-v1';
/** Decisions are applied where the loop waits, not in their handler. */
export const DEFERRED_SIGNALS_PATCH = 'deferred-signals-v1';
/** Runs recorded before AgentPendingArgsHash upsert their status without it. */
export const PENDING_ARGS_HASH_PATCH = 'pending-args-hash-v1';
/** The configuration is resolved in a local activity: histories recorded before it resolved the input in workflow code. */
export const RESOLVED_CONFIG_PATCH = 'resolved-config-v1';
/** A read-only tool marked `local` runs as a local activity. */
export const LOCAL_TOOLS_PATCH = 'local-read-tools-v1';
/** The continue-as-new decision: runs whose history was recorded before it existed replay without it (see "Changing the loop safely" in docs/internals.md). */
export const CONTINUE_AS_NEW_PATCH = 'continue-as-new-v1';
/** A refused call gets a trace line (tool_result refused). */
export const REFUSED_CALLS_TRACED_PATCH = 'refused-calls-traced-v1';
/**
 * Guards the wait out of a model outage: histories recorded before it failed
 * the run when the activity's retries ran out. Asked only then, so a run that
 * never meets an outage writes no marker.
 */
export const MODEL_OUTAGE_PATCH = 'model-outage-wait-v1';
/** The same for tool calls: histories recorded before it failed the run when a tool activity's retries ran out. */
export const TOOL_OUTAGE_PATCH = 'tool-outage-wait-v1';

/**
 * A signed steer sent a second time is refused (./steering.ts). Asked where a
 * repeat arrives, and only there: a history recorded before the check queued
 * the repeat and has no marker, so its replay queues it again.
 */
export const SIGNED_STEER_ONCE_PATCH = 'signed-steer-once-v1';

/** The patches asked in a run's first activation (askPatches), carried on the run's context. */
export interface Patches {
  /** patched(ALL_PATCHES_V2): every patch the project has, including those asked later in a run, holds; none is asked. */
  allV2: boolean;
  /** patched(ALL_PATCHES): every patch before it holds, none of them asked (askPatches). */
  all: boolean;
  /** Activities are cancelled with WAIT_CANCELLATION_COMPLETED (./activity-options.ts). */
  waitForCancellation: boolean;
  /** Model calls send stored messages by address (common/message-refs.ts). */
  messageRefs: boolean;
  /** The dedupe cache drops its oldest results past MAX_CACHE_CHARS. */
  boundedCache: boolean;
  /** Decisions are applied where the loop waits, not in their handler (./approvals.ts PendingDecisions). */
  deferredSignals: boolean;
  /** The AgentPendingArgsHash search attribute joins every status upsert (./visibility.ts). */
  pendingArgsHash: boolean;
}

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
 * ALL_PATCHES). Call it first, before anything awaits (startRun), as agentRun always
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

/** Asked in resolveConfig (./start.ts), before the configuration is resolved. */
export function resolvedConfigPatched(patches: Patches): boolean {
  return patches.all || wf.patched(RESOLVED_CONFIG_PATCH);
}

/** Asked at a local tool's call (./tool-dispatch.ts), in histories from before ALL_PATCHES. */
export function localToolsPatched(patches: Patches): boolean {
  return patches.all || wf.patched(LOCAL_TOOLS_PATCH);
}

/** Asked at the turn boundary (./continue-as-new.ts), before the history's size is looked at. */
export function continueAsNewPatched(patches: Patches): boolean {
  return patches.allV2 || wf.patched(CONTINUE_AS_NEW_PATCH);
}

/** Asked when a call is refused (./tool-dispatch.ts), before its trace line. */
export function refusedCallsTracedPatched(patches: Patches): boolean {
  return patches.allV2 || wf.patched(REFUSED_CALLS_TRACED_PATCH);
}

/** Asked when a model call's retries first ran out (./outage-wait.ts). */
export function modelOutagePatched(): boolean {
  return wf.patched(MODEL_OUTAGE_PATCH);
}

/** Asked when a signed steer arrives again (./steering.ts), in a handler only (a validator writes no history). */
export function signedSteerOncePatched(): boolean {
  return wf.patched(SIGNED_STEER_ONCE_PATCH);
}

/** Asked when a tool call's retries first ran out (./outage-wait.ts). */
export function toolOutagePatched(): boolean {
  return wf.patched(TOOL_OUTAGE_PATCH);
}
