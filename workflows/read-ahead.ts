// The loop's side of read-ahead (activities/read-ahead.ts): each model call
// names the run's tools that are local, read-only and never need approval;
// the activity runs the reply's leading calls of them after the reply; the
// loop then decides every call exactly as before, and where it would run the
// call as a local activity it takes the outcome read ahead instead. So the
// workflow task that takes a reply of reads records their results and sends
// the next model call in one activation, with no local-activity marker. An
// outcome the loop does not reach for (a cached result, a steer's interrupt,
// a Stop, a refused call) is dropped: a read changed nothing.
import type { ReadAheadInput, ReadAheadOutcome } from '../common/activity-contract.js';
import { cacheKeyDigest } from '../common/args-hash.js';
import { runContextKey } from '../common/run-context.js';
import { readsAhead, type ToolSpec } from '../common/tool-spec.js';
import type { RunContext } from './run-context.js';
import { callKeyPrefix, type PendingCall } from './tool-calls.js';

/** At most this many cache digests a model call (17 bytes of history each). */
export const MAX_CACHED_DIGESTS = 256;

export class ReadAheadResults {
  private readonly tools: string[];
  /** The outcomes of the last reply's calls, by their index in it; the reply's place in the transcript. */
  private held: { messageIndex: number; byIndex: Map<number, ReadAheadOutcome> } | null = null;

  constructor(specs: readonly ToolSpec[]) {
    this.tools = specs.filter(readsAhead).map((s) => s.name);
  }

  /** The model call's `readAhead` field (none when the run has no such tool); forgets what the last reply read. */
  input(ctx: Pick<RunContext, 'ids' | 'cfg' | 'state'>): { readAhead?: ReadAheadInput } {
    this.held = null;
    if (this.tools.length === 0) return {};
    const { ids, cfg, state } = ctx;
    return {
      readAhead: {
        tools: this.tools,
        workspace: cfg.workspace,
        maxResultChars: cfg.maxToolResultChars,
        ...(cfg.runContext !== undefined ? { runContextKey: runContextKey(cfg.runContext) } : {}),
        // The keys idempotencyKey (./tool-calls.ts) gives the reply's calls once takeReply has counted them.
        keyPrefix: callKeyPrefix(ids.workflowId, ids.effectsChainId),
        firstOccurrence: state.callsProposed + 1,
        // Read-only tools are cached unless dedupe is off (./tool-calls.ts isCacheable).
        // The most recent entries only (insertion order is recency: run-state.ts rememberResult): one the list leaves out is only read for nothing.
        ...(cfg.dedupe !== 'off' ? { cached: Object.keys(state.cache).slice(-MAX_CACHED_DIGESTS).map(cacheKeyDigest) } : {}),
      },
    };
  }

  /** Keeps what the activity read ahead for the reply now at `messageIndex` of the transcript. */
  keep(outcomes: readonly ReadAheadOutcome[] | undefined, messageIndex: number): void {
    if (!outcomes?.length) return;
    this.held = { messageIndex, byIndex: new Map(outcomes.map((o) => [o.index, o])) };
  }

  /** The outcome read ahead for this call of the last reply, once; undefined when there is none. */
  take(ctx: Pick<RunContext, 'state'>, pending: PendingCall): ReadAheadOutcome | undefined {
    const held = this.held;
    if (!held || held.messageIndex !== pending.messageIndex) return undefined;
    const message = ctx.state.messages[pending.messageIndex];
    const index = message.role === 'assistant' ? (message.tool_calls ?? []).indexOf(pending.call) : -1;
    const outcome = held.byIndex.get(index);
    if (!outcome || outcome.callId !== pending.call.id) return undefined;
    held.byIndex.delete(index);
    return outcome;
  }
}
