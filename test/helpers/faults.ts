// Faults and holds the harness's tests and experiments install in a worker
// (AgentWorkerOptions.seams), never shipped switches: a worker killed
// mid-write as a crash would kill it, a write held until a Stop reaches it.
// Each wraps the worker's write tools; names and specs stay as they are, so
// the run under test sees the worker it would see in production.
import type { WriteHooks } from '../../activities/tools/context.js';
import type { ToolDefinition } from '../../activities/tools/define-tool.js';
import { NothingChanged } from '../../activities/tools/tool-error.js';
import type { PluginSeams } from '../../worker/agent-plugin.js';

/**
 * Where a write dies with SIGKILL:
 * - `effect:after_claim`: the call is claimed in the effect ledger, nothing done yet;
 * - `effect:before_record`: the write acted, its result not recorded;
 * - `delete_file:after_unlink`: the same, delete_file only (the file is gone on the dead worker's host).
 */
export const CRASH_POINTS = ['effect:after_claim', 'effect:before_record', 'delete_file:after_unlink'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

export function isCrashPoint(s: string): s is CrashPoint {
  return (CRASH_POINTS as readonly string[]).includes(s);
}

const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: killed');
};

/** The worker process dies at `point` in a write (the effect protocol claims before a tool runs and records after). */
export function crashAt(point: CrashPoint): PluginSeams {
  return {
    wrapTool: (def: ToolDefinition): ToolDefinition => {
      // Only the writes the effect protocol guards: reads and idempotent writes have no claim to die holding.
      if (def.readOnly || def.idempotent) return def;
      if (point === 'delete_file:after_unlink' && def.name !== 'delete_file') return def;
      return {
        ...def,
        run: async (ctx, args) => {
          if (point === 'effect:after_claim') die();
          try {
            await def.run(ctx, args);
          } catch (err) {
            // A write that changed nothing releases its claim: it never reaches the record.
            if (err instanceof NothingChanged || point === 'delete_file:after_unlink') throw err;
          }
          return die();
        },
      };
    },
  };
}

/** Holds each write at the points of `hooks` (a Stop arriving mid-write): the tool's ctx.hooks, empty in production. */
export function holdWrites(hooks: WriteHooks): PluginSeams {
  return {
    wrapTool: (def: ToolDefinition): ToolDefinition => (def.readOnly ? def : { ...def, run: (ctx, args) => def.run({ ...ctx, hooks }, args) }),
  };
}
