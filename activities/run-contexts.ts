// Where a tool activity finds its run's context (`ctx.run.context`). The
// activity input carries only the context's key (common/run-context.ts), so a
// run's history holds the object once, not once per tool call. The worker
// keeps the contexts it knows by key: resolveConfig files each run's as it
// resolves it (the tools of a run usually run on the worker that started it);
// a worker that has not seen it (another host, a restart, a tool queue of its
// own) asks the run for its configuration and keeps the answer only if it
// hashes to the key, so a stale or foreign context never reaches a tool.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { configQuery } from '../common/run-messages.js';
import { runContextKey, type RunContextValue } from '../common/run-context.js';

/** Contexts are small (8 KiB at most): this many cover every run a worker is likely to serve at once. */
const MAX_KEPT = 2000;

export class RunContexts {
  /** key -> the context's JSON (each call parses its own copy: a tool that mutates it changes no other call's). */
  private readonly known = new Map<string, string>();

  /** Keeps a run's context (resolveConfig, as a run starts). */
  remember(context: RunContextValue): void {
    this.keep(runContextKey(context), JSON.stringify(context));
  }

  private keep(key: string, json: string): void {
    this.known.delete(key);
    this.known.set(key, json);
    // Oldest first in a Map's order: the least recently used goes.
    while (this.known.size > MAX_KEPT) this.known.delete(this.known.keys().next().value as string);
  }

  /** The context a tool call of `workflowId` gets for `key`: from memory, else from the run itself. */
  async get(workflowId: string, key: string): Promise<RunContextValue> {
    let json = this.known.get(key);
    if (json === undefined) {
      const cfg = await Context.current().client.workflow.getHandle(workflowId).query(configQuery);
      const context = cfg.runContext;
      if (context === undefined || runContextKey(context) !== key) {
        // Retryable: the run may still be starting; a run whose context never matches fails the call by its own retry policy.
        throw ApplicationFailure.retryable(`the run context of ${workflowId} does not match the call's key ${key.slice(0, 12)}…`, 'RunContextUnavailable');
      }
      json = JSON.stringify(context);
      this.keep(key, json);
    } else this.keep(key, json);
    return JSON.parse(json) as RunContextValue;
  }
}
