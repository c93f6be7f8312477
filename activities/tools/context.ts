import type { EffectGuard } from '../effects/protocol.js';
import { workspaceFiles, type WorkspaceFiles } from './files.js';
import { ensureWorkspace } from './workspace.js';

/** What a tool implementation gets from the activity that runs it. */
export interface ToolContext {
  /** Real path of the run's workspace; every path must stay inside it. */
  root: string;
  /**
   * The workspace, sealed (./files.ts): read, write, remove and resolve a
   * path relative to it. Links are resolved and judged where they land, files
   * are opened without following links and checked on the open descriptor
   * (regular files only, inside the workspace), secrets are refused, and a
   * call no person approved changes nothing its approval rule would have
   * asked about. A tool that touches files uses these, not node:fs.
   */
  files: WorkspaceFiles;
  /** One per logical operation (the tool call), stable across retries. */
  idempotencyKey: string;
  /**
   * A write's claim on its call (activities/effects/protocol.ts): call
   * `await ctx.effect.confirm()` right before the irreversible step; it throws
   * when another attempt took the call over, and then the step must not
   * happen. The harness claims the call before `run` and records its result
   * after, so a write never keeps its own ledger. A no-op for read-only and
   * idempotent tools.
   */
  effect: EffectGuard;
  /**
   * When this attempt must stop starting anything (ms since the epoch, this
   * host's clock): the activity's timeout less a margin. A tool that calls out
   * bounds its requests by it, so no request outlives its attempt.
   */
  deadline: number;
  /** Fires when the run is cancelled; tools that wait must listen. */
  signal: AbortSignal;
  /** Reports progress to the trace and the heartbeat. */
  progress(label: string): void;
  /** A sleep that throws at once when the run is cancelled. */
  sleep(ms: number): Promise<void>;
  /** The last step an earlier attempt of this call reported (0 on the first attempt). */
  resumeFromStep: number;
  /** Callbacks around a write's claim and record (tests use them to stop a worker mid-write); empty in production. */
  hooks: WriteHooks;
  /** The run this call serves. */
  run: ToolRunInfo;
}

/** Whose run a tool call serves: what a tool scopes its work to (docs/tools.md, "Authorization"). */
export interface ToolRunInfo {
  /** The workflow id: names the run, stable across continue-as-new. */
  workflowId: string;
  /**
   * The run's `runContext` as the caller gave it (tenant, user, ticket):
   * the caller's word, never the model's, so a tool may scope its query by
   * it. A copy per call; empty when the run was given none. Sub-agents
   * inherit their parent's.
   */
  context: Readonly<Record<string, unknown>>;
}

/**
 * Seams inside a write, for tests that must hold a write at a chosen point
 * (a Stop arriving mid-write). Empty in production. Each gets the call's
 * cancellation signal.
 */
export interface WriteHooks {
  /** Before the write commits to acting: a Stop seen after this still stops it. */
  beforeAct?: (signal: AbortSignal) => Promise<void>;
  /** After the intent is recorded, just before the irreversible step. */
  beforeCommit?: (signal: AbortSignal) => Promise<void>;
  /** Right before ctx.files opens a resolved path (reads too): a test swaps a link here. */
  beforeOpen?: (path: string) => void;
}

/**
 * A context for running a tool outside an activity — the benchmark's
 * in-process loop and the unit tests: a seeded workspace under `base`, no
 * effect protocol (nothing retries), no cancellation, no progress reporting.
 */
export function plainToolContext(base: string, idempotencyKey = 'plain', hooks: WriteHooks = {}): ToolContext {
  const root = ensureWorkspace(base, 'w');
  return {
    root,
    files: workspaceFiles(root, { beforeOpen: hooks.beforeOpen }),
    idempotencyKey,
    effect: { confirm: async () => {} },
    deadline: Number.POSITIVE_INFINITY,
    signal: new AbortController().signal,
    progress: () => {},
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    resumeFromStep: 0,
    hooks,
    run: { workflowId: 'plain', context: {} },
  };
}
