// runTestWorker: a team's worker — its workflows module, its activities and
// AgentPlugin with its tools — against a Temporal server the test names
// (the team's own `temporal server start-dev`, a TestWorkflowEnvironment's
// server, a CI service), on a queue of the test's own, with a client that
// reads the runs' compressed payloads. Made for vitest's beforeAll/afterAll.
import { randomUUID } from 'node:crypto';
import { Client, Connection, type ClientPlugin } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { AgentPlugin } from '../worker/agent-plugin.js';
import { WORKFLOWS_PATH } from '../worker/workflows-path.js';

/** What {@link runTestWorker} runs, and where. */
export interface TestWorkerOptions {
  /** The Temporal frontend, `host:port`: a `temporal server start-dev` (`localhost:7233`), a server the test suite started, a CI service. */
  address: string;
  /** The namespace; default `default`. */
  namespace?: string;
  /** The task queue; default a fresh `test-<random>` one, so test files do not take each other's tasks. */
  taskQueue?: string;
  /**
   * The team's workflows module (absolute path), which re-exports `agentRun`
   * beside the team's own workflows; default the harness's own (`agentRun`
   * alone). Bundled when the worker is created (seconds).
   */
  workflowsPath?: string;
  /** A prebuilt bundle (`bundleWorkflowCode`'s) instead of `workflowsPath`: one bundle for several workers of a test file. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * The worker's plugins, as the team's `Worker.create` has them: one of
   * them an AgentPlugin (`new AgentPlugin({ model: { baseUrl: kit.baseUrl },
   * workspace, tools })`, of `temporal-agent-harness/worker`). Those that
   * are client plugins too (AgentPlugin is: its codec) configure `client`.
   */
  plugins: WorkerPlugin[];
  /** The team's own activities, beside the harness's. */
  activities?: object;
  /** A worker connection to use (not closed by `stop()`); default one opened to `address` (closed by `stop()`). */
  connection?: NativeConnection;
  /** Runs the worker caches; default Temporal's. */
  maxCachedWorkflows?: number;
}

/** A team's worker running for a test. */
export interface RunningTestWorker {
  /** The queue it polls: start runs there. */
  taskQueue: string;
  /**
   * A client on the same server and namespace, with the harness's codec
   * (AgentPlugin's): it reads the runs' results and queries. An AgentClient
   * over it: `new AgentClient({ client, taskQueue })`.
   */
  client: Client;
  /**
   * Shuts the worker down (its running activities are cancelled, its
   * plugin's MCP servers and ledger closed) and closes the connections it
   * opened. Rethrows the error that stopped the worker, if one did.
   */
  stop(): Promise<void>;
}

/**
 * Runs a team's worker against the Temporal server at `address` until
 * `stop()`: `Worker.create` with the team's workflows module, activities and
 * plugins (an AgentPlugin among them), then `worker.run()` in the
 * background. It throws as `Worker.create` does (one line naming the
 * option) and leaves nothing open.
 *
 * @example
 * ```ts
 * let worker: RunningTestWorker;
 * beforeAll(async () => {
 *   worker = await runTestWorker({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
 *     workflowsPath: fileURLToPath(new URL('../src/workflows.js', import.meta.url)),
 *     plugins: [new AgentPlugin({ model: { baseUrl: kit.baseUrl }, workspace: mkdtempSync(join(tmpdir(), 'ws-')), tools: [lookupTicket] })] });
 * });
 * afterAll(() => worker.stop());
 * ```
 */
export async function runTestWorker(opts: TestWorkerOptions): Promise<RunningTestWorker> {
  if (typeof opts.address !== 'string' || opts.address === '') throw new Error(`runTestWorker: address must be the Temporal frontend's host:port, got ${JSON.stringify(opts.address)}`);
  if (opts.workflowsPath !== undefined && opts.workflowBundle !== undefined) throw new Error('runTestWorker: give workflowsPath or workflowBundle, not both');
  const namespace = opts.namespace ?? 'default';
  const taskQueue = opts.taskQueue ?? `test-${randomUUID().slice(0, 8)}`;
  if (!Array.isArray(opts.plugins) || !opts.plugins.some((p) => p instanceof AgentPlugin)) {
    throw new Error('runTestWorker: plugins must include an AgentPlugin (new AgentPlugin({ model, workspace, tools }) of temporal-agent-harness/worker)');
  }
  // AgentPlugin (and any other plugin for both sides) also configures the client: the same codec, with the same payload keys, as the worker's.
  const clientPlugins = opts.plugins.filter((p): p is WorkerPlugin & ClientPlugin => typeof (p as Partial<ClientPlugin>).configureClient === 'function');
  const opened: { close(): Promise<void> }[] = [];
  const closeOpened = async () => {
    for (const c of opened.reverse()) await c.close().catch(() => undefined);
  };
  try {
    const connection = opts.connection ?? (await NativeConnection.connect({ address: opts.address }));
    if (!opts.connection) opened.push(connection);
    const worker = await Worker.create({
      connection,
      namespace,
      taskQueue,
      ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: opts.workflowsPath ?? WORKFLOWS_PATH }),
      ...(opts.activities ? { activities: opts.activities } : {}),
      ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
      plugins: opts.plugins,
    });
    const clientConnection = await Connection.connect({ address: opts.address });
    opened.push(clientConnection);
    const client = new Client({ connection: clientConnection, namespace, plugins: clientPlugins });
    let failure: unknown = null;
    const running = worker.run().catch((err: unknown) => {
      failure = err;
    });
    return {
      taskQueue,
      client,
      async stop() {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        await closeOpened();
        if (failure) throw failure;
      },
    };
  } catch (err) {
    await closeOpened();
    throw err;
  }
}
