// The package's testing entry (`temporal-agent-harness/testing`): the scripted
// model provider the harness's own suite runs against, for a team's tests of
// its tools and workflows. No model, no network beyond the loopback.
import { startProvider, type LoggedRequest, type Scenario } from './provider/server.js';
import { addFault, clearFaults, providerRequests } from './provider/control.js';
import type { Fault, FaultMatch, FaultRule, RequestFacts } from './provider/faults.js';

// RequestFacts: what LoggedRequest extends.
export type { Scenario, LoggedRequest, Fault, FaultMatch, FaultRule, RequestFacts };
export type { ScriptInput, ScriptedCall, ScriptedReply } from './provider/scenarios.js';

export { SCRIPTED_MODELS, type ScriptedModel } from '../common/scripted-models.js';

/** How {@link startScriptedModel} listens and answers. */
export interface ScriptedModelOptions {
  /** The port to listen on; default 0: a free one the system picks. */
  port?: number;
  /** The interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** A fixed delay added to every reply, in ms; default 0. */
  latencyMs?: number;
  /** When set, every request must carry `Authorization: Bearer <apiKey>` (pass it as the worker's model API key). */
  apiKey?: string;
  /**
   * Scenarios of your own, by model name, beside the built-in ones (a
   * built-in's name is refused). Each is a pure function of the request —
   * its turn, the tool results so far, the tools offered, the task — so a run
   * killed and resumed gets the same replies. Name it as a run's `model`.
   *
   * @example
   * scenarios: { lookup: ({ turn, toolText }) => turn === 0
   *   ? { type: 'calls', calls: [{ id: 'c1', name: 'lookup_ticket', args: { id: 'T-1' } }] }
   *   : { type: 'answer', content: `The ticket: ${toolText}` } }
   */
  scenarios?: Record<string, Scenario>;
}

/** A running scripted provider. */
export interface RunningScriptedModel {
  /**
   * The OpenAI-compatible base URL (`http://127.0.0.1:PORT/v1`): the worker's
   * model `baseUrl`. A run picks its scenario by its input's `model`
   * (one of {@link SCRIPTED_MODELS}, e.g. `plan`, `destructive`, `script`).
   */
  baseUrl: string;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
  /**
   * Queues a fault for the requests it matches (a 429 or 500, a reset, a
   * delay, a malformed body, a reply without usage, or `down` for a while):
   * match on a marker in the task (`taskIncludes`) so it hits one run only.
   */
  addFault(rule: FaultRule): Promise<void>;
  /** Ends the faults queued for one marker (a `down` one included). */
  clearFaults(taskIncludes: string): Promise<void>;
  /** The requests whose task includes the marker, with the status each got. */
  requests(taskIncludes: string): Promise<LoggedRequest[]>;
}

/**
 * Starts the scripted provider, an HTTP server shaped like OpenAI's
 * `POST /v1/chat/completions` whose replies are scripted by scenario: the
 * same one `npm run provider` runs and the harness's tests use.
 */
export async function startScriptedModel(opts: ScriptedModelOptions = {}): Promise<RunningScriptedModel> {
  const provider = await startProvider({ port: opts.port ?? 0, host: opts.host, latencyMs: opts.latencyMs, apiKey: opts.apiKey, scenarios: opts.scenarios });
  const baseUrl = provider.url;
  return {
    baseUrl,
    close: () => provider.close(),
    addFault: (rule) => addFault(baseUrl, rule),
    clearFaults: (marker) => clearFaults(baseUrl, marker),
    requests: (marker) => providerRequests(baseUrl, marker),
  };
}
