// What a test file needs to drive real runs: its own worker (own task queue,
// temp workspace root and trace folder) on the shared dev server, a client,
// and helpers to start runs, wait for states, read traces and inject
// provider faults.
import { Client, Connection, type WorkflowClientInterceptor, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, inject, vi } from 'vitest';
import { readTrace, type TraceLine } from '../../node/trace-format.js';
import { dataConverter, workerDataConverter } from '../../node/payload-codec.js';
import type { PayloadKey } from '../../node/payload-keys.js';
import { createAgentWorker } from '../../worker/create-worker.js';
import { holdWrites } from './faults.js';
import { Experiments } from './experiments.js';
import { queuesToReplay, replayRunsOnQueue } from './replay-queues.js';
import { TEST_CACHE } from './spawn-worker.js';
import { everyExecution, replayFailures } from '../replay/executions.js';
import type { WriteHooks } from '../../activities/tools/context.js';
import type { Toolset } from '../../activities/tools/toolset.js';
import type { AgentInput, NotifySetting, Pricing, RunDefaults, RunResult } from '../../common/contract.js';
import type { ModelProvider } from '../../activities/ai-sdk-model.js';
import type { TokenSink } from '../../node/token-sink.js';
import type { agentRun } from '../../workflows/index.js';

export { addFault, clearFaults, providerRequests } from '../../dev/provider/control.js';
export { waitForApproval } from './wait-for-approval.js';

export interface Harness {
  client: Client;
  taskQueue: string;
  workspaceRoot: string;
  traceDir: string;
  address: string;
  providerUrl: string;
  /** Starts agentRun on the file's queue, typed by the workflow (its result is a RunResult), and replays the run when the file ends. */
  start(input: AgentInput, id?: string): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentRun>>;
  /**
   * A run this file started another way than through `client` (the CLI, a
   * client of its own) on a queue no worker of the harness polls: replayed
   * with the others when the file ends. Without a run id, every run of the
   * workflow id the server lists is.
   */
  track(workflowId: string, runId?: string): void;
  /** A queue this file's runs use that no worker of the harness polls (a worker process's): every run on it is replayed when the file ends. */
  replayQueue(taskQueue: string): void;
  run(input: AgentInput): Promise<RunResult>;
  /** Experiment settings for a run of the file's worker, by workflow id: `h.start(input, h.experiments.set(id, {...}))`. */
  experiments: Experiments;
  trace(runId: string, chainId?: string): TraceLine[];
  /** The workflow's own events (no lines written by activities): seq 1..n. */
  events(runId: string): TraceLine[];
  /** Another in-process worker on the shared server: its own options, the file's folders, this or another queue. */
  startWorker(opts?: ExtraWorkerOptions): Promise<{ taskQueue: string; shutdown(): Promise<void> }>;
  /** A worker built (its bundle loaded) but not polling until `run()`: the moment it starts is the test's. */
  prepareWorker(opts?: ExtraWorkerOptions): Promise<{ taskQueue: string; run(): void; shutdown(): Promise<void> }>;
}

export interface ExtraWorkerOptions {
  taskQueue?: string;
  runDefaults?: Partial<RunDefaults>;
  writeHooks?: WriteHooks;
  /** Default TEST_CACHE (test/helpers/spawn-worker.ts). */
  maxCachedWorkflows?: number;
  /** Default: the file's workspace root's .messages (shared with its other workers). */
  messageStoreDir?: string;
  /** The tools offered (default: the built-ins). */
  toolset?: Toolset;
  /** Poll activity tasks only: no workflow task ever reaches this worker. */
  activitiesOnly?: boolean;
  /** Run the loop (and its local activities) only: model and tool calls go to another worker. */
  loopOnly?: boolean;
  /** How often running calls heartbeat (default node/heartbeat.ts). */
  heartbeatEveryMs?: number;
  /** This worker's payload keys (default: the file's); null: none (a worker that cannot read encrypted runs). */
  payloadKeys?: readonly PayloadKey[] | null;
  /** Another endpoint for the built-in client than the shared scripted provider. */
  llmBaseUrl?: string;
  llmApiKey?: string;
  /** An AI SDK provider instead of the built-in client (test/ai-sdk-model.test.ts). */
  modelProvider?: ModelProvider;
  /** Prices of models beyond the scripted provider's. */
  modelPrices?: Record<string, Pricing>;
  /** Where model attempts' text goes as it arrives. */
  tokens?: TokenSink;
  /** Webhooks told when a run parks on a person (AgentPlugin `notify`). */
  notify?: NotifySetting;
  /** What the live stream carries (AGENT_LIVE_STREAM; default `full`). */
  stream?: 'full' | 'events';
}


let runtimeInstalled = false;

export interface HarnessOptions {
  /** Another model endpoint than the shared scripted provider, made in beforeAll. */
  llm?: () => Promise<{ url: string; apiKey?: string; model?: string }>;
  /** false: no in-process worker (the file runs worker processes of its own). */
  worker?: boolean;
  /** Payload keys for the file's client and worker (absent: AGENT_PAYLOAD_KEYS, unset in the suite: none). */
  payloadKeys?: readonly PayloadKey[];
  /** Prices of models beyond the scripted provider's, for the file's worker (a `"*"` entry prices every unlisted model). */
  modelPrices?: Record<string, Pricing>;
  /** false: replay only the runs `client` started or h.track named, not every run on the file's queues (for a file whose runs ran other code on purpose). */
  replayQueues?: boolean;
}

/** Registers beforeAll/afterAll that bring a worker up and down around the file's tests. */
export function useHarness(opts: HarnessOptions = {}): Harness {
  const address = inject('temporalAddress');
  const providerUrl = inject('providerUrl');
  const h = {
    address,
    providerUrl,
    taskQueue: `test-${randomUUID().slice(0, 8)}`,
    workspaceRoot: mkdtempSync(join(tmpdir(), 'agent-ws-')),
    traceDir: mkdtempSync(join(tmpdir(), 'agent-trace-')),
    experiments: new Experiments(),
  } as Harness;
  let worker: Worker;
  let workerDone: Promise<void>;
  let nativeConnection: NativeConnection;

  // Every run the file's client started (h.start, client.workflow.start or
  // execute, signalWithStart, updateWithStart, an AgentClient over it), on
  // whatever queue: recorded by the client itself, so no test has to.
  const started: { workflowId: string; runId: string }[] = [];
  const tracked: { workflowId: string; runId?: string }[] = [];
  // Every queue a worker of this file polled, with those of its worker
  // processes and those h.replayQueue named (test/helpers/replay-queues.ts):
  // the runs on them are replayed at the end too, however a test started
  // them (the CLI, a raw client, a child).
  const queues = new Set<string>([h.taskQueue]);
  const recordStarts: WorkflowClientInterceptor = {
    async startWithDetails(input, next) {
      const out = await next(input);
      started.push({ workflowId: input.options.workflowId, runId: out.runId });
      return out;
    },
    async signalWithStart(input, next) {
      const runId = await next(input);
      started.push({ workflowId: input.options.workflowId, runId });
      return runId;
    },
    async startUpdateWithStart(input, next) {
      const out = await next(input);
      if (out.workflowExecution.runId) started.push({ workflowId: out.workflowExecution.workflowId, runId: out.workflowExecution.runId });
      return out;
    },
  };
  beforeAll(async () => {
    if (!runtimeInstalled) {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
      runtimeInstalled = true;
    }
    h.client = new Client({
      connection: await Connection.connect({ address }),
      dataConverter: dataConverter(opts.payloadKeys ? { payloadKeys: opts.payloadKeys } : {}),
      interceptors: { workflow: [recordStarts] },
    });
    if (opts.worker === false) return;
    nativeConnection = await NativeConnection.connect({ address });
    const llm = opts.llm ? await opts.llm() : { url: providerUrl, apiKey: undefined, model: undefined };
    worker = await createAgentWorker({
      connection: nativeConnection,
      taskQueue: h.taskQueue,
      plugin: {
        model: { baseUrl: llm.url, ...(llm.apiKey ? { apiKey: llm.apiKey } : {}), ...(llm.model ? { model: llm.model } : {}) },
        workspace: h.workspaceRoot,
        traceDir: h.traceDir,
        ...(opts.payloadKeys ? { payloadKeys: opts.payloadKeys } : {}),
        ...(opts.modelPrices ? { modelPrices: opts.modelPrices } : {}),
      },
      workflowBundle: { codePath: inject('workflowBundlePath') },
      seams: h.experiments.seams(),
    });
    workerDone = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await workerDone;
    // Every execution of every run this file started (continued or reset
    // runs too) replays on this code from its first event. The workers cache
    // runs, so most of their tasks never replayed: a run whose replay would
    // take another path than the cached run took fails here.
    if (h.client) {
      // A tracked run's first execution, when the test did not know it: any run of the id (the replay lists the others).
      for (const t of tracked) started.push({ workflowId: t.workflowId, runId: t.runId ?? (await h.client.workflow.getHandle(t.workflowId).describe()).runId });
      if (opts.replayQueues !== false) started.push(...(await runsOnQueues(h.client, new Set([...queues, ...queuesToReplay()]))));
      await replayRuns(h.client, started, opts.payloadKeys);
    }
    await h.client?.connection.close();
    await nativeConnection?.close();
  });

  h.start = async (input, id) => {
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue: h.taskQueue,
      workflowId: id ?? `${input.model ?? 'plan'}-${randomUUID().slice(0, 8)}`,
      args: [input],
    });
    return handle;
  };
  h.track = (workflowId, runId) => {
    tracked.push({ workflowId, ...(runId !== undefined ? { runId } : {}) });
  };
  h.replayQueue = replayRunsOnQueue;
  h.startWorker = async (extra = {}) => {
    const w = await h.prepareWorker(extra);
    w.run();
    return w;
  };
  h.prepareWorker = async (extra = {}) => {
    const connection = await NativeConnection.connect({ address });
    const taskQueue = extra.taskQueue ?? h.taskQueue;
    queues.add(taskQueue);
    const w = await createAgentWorker({
      connection,
      taskQueue,
      plugin: {
        model: extra.modelProvider
          ? { provider: extra.modelProvider }
          : { baseUrl: extra.llmBaseUrl ?? providerUrl, ...(extra.llmApiKey ? { apiKey: extra.llmApiKey } : {}) },
        workspace: h.workspaceRoot,
        traceDir: h.traceDir,
        ...(extra.runDefaults ? { runDefaults: extra.runDefaults } : {}),
        ...(extra.heartbeatEveryMs !== undefined ? { heartbeatEveryMs: extra.heartbeatEveryMs } : {}),
        ...(extra.messageStoreDir ? { messageStoreDir: extra.messageStoreDir } : {}),
        ...(extra.modelPrices ? { modelPrices: extra.modelPrices } : {}),
        ...(extra.tokens ? { tokens: extra.tokens } : {}),
        ...(extra.notify ? { notify: extra.notify } : {}),
        ...(extra.stream ? { stream: extra.stream } : {}),
        ...(extra.payloadKeys !== undefined ? { payloadKeys: extra.payloadKeys } : opts.payloadKeys ? { payloadKeys: opts.payloadKeys } : {}),
      },
      workflowBundle: { codePath: inject('workflowBundlePath') },
      maxCachedWorkflows: extra.maxCachedWorkflows ?? TEST_CACHE.maxCachedWorkflows,
      stickyTimeoutMs: TEST_CACHE.stickyTimeoutMs,
      ...(extra.writeHooks ? { seams: holdWrites(extra.writeHooks) } : {}),
      ...(extra.activitiesOnly ? { activitiesOnly: true } : {}),
      ...(extra.loopOnly ? { loopOnly: true } : {}),
      ...(extra.toolset ? { toolset: extra.toolset } : {}),
    });
    let running: Promise<void> | null = null;
    return {
      taskQueue,
      run: () => {
        running ??= w.run();
      },
      shutdown: async () => {
        if (running) {
          w.shutdown();
          await running;
        }
        await connection.close();
      },
    };
  };
  h.run = async (input) => (await h.start(input)).result();
  h.trace = (runId, chainId) => readTrace(h.traceDir, runId, chainId);
  h.events = (runId) => h.trace(runId).filter((l) => l.step === undefined);
  return h;
}

/** A unique workspace folder name, so runs that delete files do not share one. */
export const freshWorkspace = () => `ws-${randomUUID().slice(0, 8)}`;

/** A unique marker to put in a task, so provider faults and logs match one run only. */
export const marker = () => `[m-${randomUUID().slice(0, 8)}]`;

/**
 * Polls for an event (a trace line, a status, a file). The deadline is only a
 * safety net against a hang, generous for a loaded 2-core machine: no test
 * asserts how fast anything happens (that is the benchmark's job).
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined> | T | null | undefined, timeoutMs = 90_000): Promise<T> {
  // vi.waitFor retries a callback that throws; a probe that throws (a query
  // refused, a file unreadable) fails the wait at once, as it always did, so
  // its error is kept aside rather than retried until the deadline.
  const failed: { error?: unknown; thrown: boolean } = { thrown: false };
  const v = await vi.waitFor(
    async () => {
      let got: T | null | undefined;
      try {
        got = await probe();
      } catch (error) {
        Object.assign(failed, { error, thrown: true });
        return null;
      }
      if (got === null || got === undefined || got === false) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      return got;
    },
    { timeout: timeoutMs, interval: 50 },
  );
  if (failed.thrown) throw failed.error;
  return v as T;
}

/** Every execution visibility lists on these task queues (the dev server's visibility is written with the run, so none is missed). */
export async function runsOnQueues(client: Client, queues: ReadonlySet<string>): Promise<{ workflowId: string; runId: string }[]> {
  const runs: { workflowId: string; runId: string }[] = [];
  for (const q of queues) {
    for await (const w of client.workflow.list({ query: `TaskQueue = ${JSON.stringify(q)}` })) runs.push({ workflowId: w.workflowId, runId: w.runId });
  }
  return runs;
}

/**
 * Replays every execution of these runs (see test/replay/executions.ts) on
 * this code; throws naming every one that diverges. The harness calls it for
 * the shared server's runs when a file ends; a test whose runs live on a
 * server of its own calls it before that server stops.
 */
export async function replayRuns(client: Client, runs: readonly { workflowId: string; runId: string }[], payloadKeys?: readonly PayloadKey[]): Promise<void> {
  const executions = await everyExecution(client, runs);
  const failures = await replayFailures({ codePath: inject('workflowBundlePath') }, executions, payloadKeys ? { dataConverter: workerDataConverter({ payloadKeys }) } : {});
  if (failures.length) throw new Error(`${failures.length} of ${executions.length} executions (of ${runs.length} runs) do not replay:\n${failures.join('\n')}`);
}
