// The package's testing entry (`temporal-agent-harness/testing`): the scripted
// model provider the harness's own suite runs against, for a team's tests of
// its tools and workflows, and a worker helper that runs the team's worker
// (its workflows, activities and AgentPlugin) against a Temporal server the
// test names. No model, no network beyond the loopback and that server.
import { startProvider, MAX_BODY_BYTES, MAX_BODY_DEPTH, type LoggedRequest, type Scenario } from './provider/server.js';
import { addFault, clearFaults, providerLog, providerRequests } from './provider/control.js';
import type { Fault, FaultMatch, FaultRule, RequestFacts } from './provider/faults.js';
import type { RequestLogLimits, RequestLogStats } from './provider/request-log.js';

// RequestFacts: what LoggedRequest extends.
export type { Scenario, LoggedRequest, Fault, FaultMatch, FaultRule, RequestFacts, RequestLogLimits, RequestLogStats };
export type { ScriptInput, ScriptedCall, ScriptedReply } from './provider/scenarios.js';
export type { Protocol, RequestBody, RequestSettings, SeenMessage, SeenTool } from './provider/requests.js';
export { MAX_BODY_BYTES, MAX_BODY_DEPTH };
export { runTestWorker, type RunningTestWorker, type TestWorkerOptions } from './test-worker.js';

export { SCRIPTED_MODELS, type ScriptedModel } from '../common/scripted-models.js';

/** How {@link startScriptedModel} listens and answers. */
export interface ScriptedModelOptions {
  /** The port to listen on; default 0: a free one the system picks. */
  port?: number;
  /** The interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** A fixed delay added to every reply, in ms; default 0. */
  latencyMs?: number;
  /**
   * When set, every request must carry the key: `Authorization: Bearer
   * <apiKey>` on chat completions, `x-api-key: <apiKey>` on Anthropic's
   * messages (pass it as the worker's model API key, or the AI SDK
   * provider's `apiKey`).
   */
  apiKey?: string;
  /**
   * Scenarios of your own, by model name, beside the built-in ones (a
   * built-in's name is refused). Each is a pure function of the request —
   * its turn, the tool results so far, the tools offered, the task, and the
   * whole system prompt, messages, tool definitions and settings — so a run
   * killed and resumed gets the same replies. Name it as a run's `model`.
   *
   * @example
   * scenarios: { lookup: ({ turn, toolText, system }) => turn === 0
   *   ? { type: 'calls', calls: [{ id: 'c1', name: 'lookup_ticket', args: { id: 'T-1' } }] }
   *   : { type: 'answer', content: `${system ? 'Instructed. ' : ''}The ticket: ${toolText}` } }
   */
  scenarios?: Record<string, Scenario>;
  /**
   * How much the request log keeps: at most `maxRequests` requests (default
   * 10,000) and `maxBytes` of their bodies and tasks (default 64 MiB). Past
   * `maxBytes` the oldest bodies are dropped first (their requests stay,
   * with `bodyOmitted`), then the oldest requests; past `maxRequests` the
   * oldest requests. Each drop is counted ({@link RunningScriptedModel.requestLog}).
   */
  log?: RequestLogLimits;
}

/** A running scripted provider. */
export interface RunningScriptedModel {
  /**
   * The base URL (`http://127.0.0.1:PORT/v1`) of both protocols it speaks:
   * OpenAI's chat completions (`POST /v1/chat/completions`: the worker's
   * `model: { baseUrl }`, or `createOpenAICompatible({ baseURL })`) and
   * Anthropic's messages (`POST /v1/messages`: `createAnthropic({ baseURL })`).
   * A run picks its scenario by its input's `model` (one of
   * {@link SCRIPTED_MODELS}, e.g. `plan`, `destructive`, `script`, or your own).
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
  /**
   * The requests whose task (first user message) includes the marker — every
   * logged one without it — oldest first, each with the status it got and
   * its `body`: model, system prompt, messages, tool definitions and
   * settings, in one shape for both protocols ({@link RequestBody}).
   */
  requests(taskIncludes?: string): Promise<LoggedRequest[]>;
  /** How many requests the log holds, the bytes they take, and how many it dropped to stay within its limits. */
  requestLog(): Promise<RequestLogStats>;
}

/**
 * Starts the scripted provider, an HTTP server shaped like OpenAI's
 * `POST /v1/chat/completions` and Anthropic's `POST /v1/messages` whose
 * replies are scripted by scenario: the same one `npm run provider` runs and
 * the harness's tests use. It answers a body larger than
 * {@link MAX_BODY_BYTES} with a 413, one that is not JSON or nests deeper
 * than {@link MAX_BODY_DEPTH} with a 400, each naming what is wrong.
 */
export async function startScriptedModel(opts: ScriptedModelOptions = {}): Promise<RunningScriptedModel> {
  const provider = await startProvider({
    port: opts.port ?? 0,
    host: opts.host,
    latencyMs: opts.latencyMs,
    apiKey: opts.apiKey,
    scenarios: opts.scenarios,
    ...(opts.log ? { log: opts.log } : {}),
  });
  const baseUrl = provider.url;
  return {
    baseUrl,
    close: () => provider.close(),
    addFault: (rule) => addFault(baseUrl, rule),
    clearFaults: (marker) => clearFaults(baseUrl, marker),
    requests: (marker) => providerRequests(baseUrl, marker),
    requestLog: () => providerLog(baseUrl),
  };
}
