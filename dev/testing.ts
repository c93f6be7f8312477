// The package's testing entry (`temporal-agent-harness/testing`): the scripted
// model provider the harness's own suite runs against, for a team's tests of
// its tools and workflows. No model, no network beyond the loopback.
import { startProvider } from './provider/server.js';

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
}

/**
 * Starts the scripted provider, an HTTP server shaped like OpenAI's
 * `POST /v1/chat/completions` whose replies are scripted by scenario: the
 * same one `npm run provider` runs and the harness's tests use.
 */
export async function startScriptedModel(opts: ScriptedModelOptions = {}): Promise<RunningScriptedModel> {
  const provider = await startProvider({ port: opts.port ?? 0, host: opts.host, latencyMs: opts.latencyMs, apiKey: opts.apiKey });
  return { baseUrl: provider.url, close: () => provider.close() };
}
