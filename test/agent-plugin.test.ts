// The harness as a team adds it to its own worker: Worker.create with the
// team's workflows module (which re-exports agentRun), the team's activity and
// an AgentPlugin whose tools are closures over this process's memory, on the
// shared dev server with the scripted provider. The team's workflow and
// agentRun run on one worker; agentRun runs as a child of the team's workflow,
// typed, and the parent's cancellation reaches the child's running tool. Bad
// input is one error at Worker.create, and no worker polls. Every run started
// here is replayed at the end, through the plugin.
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { Resource } from '@opentelemetry/resources';
import { msToTs } from '@temporalio/common/lib/time';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, type ToolDefinition } from '../activities/tools/index.js';
import { AgentPlugin, type AgentPluginOptions } from '../worker/index.js';
import { configQuery, decideUpdate, statusQuery } from '../common/run-messages.js';
import { EncryptionPayloadCodec, GzipPayloadCodec } from '../node/payload-codec.js';
import type { AgentInput } from '../common/contract.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { livePollers } from '../worker/tool-routing.js';
import { everyExecution } from './replay/executions.js';
import { useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import * as teamActivities from './fixtures/team/activities.js';
import { agentRun, greeting, review } from './fixtures/team/workflows.js';

const TEAM_WORKFLOWS = fileURLToPath(new URL('./fixtures/team/workflows.ts', import.meta.url));
const h = useHarness({ worker: false });

// The team's own process state: what its tools close over.
const store = new Map<string, string>();
const stops: { started: number; aborted: string | null } = { started: 0, aborted: null };

const recall = defineTool({
  name: 'recall',
  description: 'Read a note of the team\'s store by key.',
  parameters: { type: 'object', properties: { key: { type: 'string', minLength: 1 } }, required: ['key'], additionalProperties: false },
  readOnly: true,
  async run(_ctx, { key }) {
    return `${key}: ${store.get(key) ?? '(nothing)'}`;
  },
});

const remember = defineTool({
  name: 'remember',
  description: 'Write a note into the team\'s store; a person approves each write.',
  parameters: {
    type: 'object',
    properties: { key: { type: 'string', minLength: 1 }, text: { type: 'string' } },
    required: ['key', 'text'],
    additionalProperties: false,
  },
  readOnly: false,
  needsApproval: true,
  async run(ctx, { key, text }) {
    await ctx.effect.confirm();
    store.set(key, text);
    return `remembered ${key}`;
  },
});

/** Waits until the run is stopped, and says when the Stop reached it. */
const waitForStop = defineTool({
  name: 'wait_for_stop',
  description: 'Wait until the run is stopped.',
  parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
  readOnly: true,
  activity: { startToCloseTimeoutMs: 300_000 },
  async run(ctx) {
    stops.started += 1;
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    stops.aborted = String(ctx.signal.reason ?? 'aborted');
    return 'stopped';
  },
});

const TOOLS = [recall, remember, waitForStop];
const workspace = mkdtempSync(join(tmpdir(), 'plugin-ws-'));
const traceDir = mkdtempSync(join(tmpdir(), 'plugin-trace-'));
const taskQueue = `team-${randomUUID().slice(0, 8)}`;
const pluginOptions = (): AgentPluginOptions => ({ model: { baseUrl: h.providerUrl }, workspace, traceDir, tools: TOOLS });
const script = (turns: unknown[][]) => `Use the team's tools. script: ${JSON.stringify(turns)}`;

let connection: NativeConnection;
let client: Client;
let worker: Worker;
let workerDone: Promise<void>;
const started: { workflowId: string; runId: string }[] = [];

beforeAll(async () => {
  connection = await NativeConnection.connect({ address: h.address });
  // The same plugin on the client gives it the codec the worker's payloads use.
  client = new Client({ connection: await Connection.connect({ address: h.address }), plugins: [new AgentPlugin(pluginOptions())] });
  worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: TEAM_WORKFLOWS,
    activities: { ...teamActivities },
    plugins: [new AgentPlugin(pluginOptions())],
  });
  workerDone = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await workerDone;
  // Every execution of the runs started here (the children too) replays on
  // the team's bundle, with only the plugin to provide the codec and sinks.
  if (started.length) {
    const executions = await everyExecution(client, started);
    const { code } = await bundleWorkflowCode({ workflowsPath: TEAM_WORKFLOWS, logger: quiet });
    let replayed = 0;
    const failures: string[] = [];
    for await (const r of Worker.runReplayHistories({ workflowBundle: { code }, plugins: [new AgentPlugin(pluginOptions())] }, executions)) {
      replayed += 1;
      if (r.error) failures.push(`${r.workflowId}: ${String(r.error)}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(executions.length);
  }
  await client?.connection.close();
  await connection?.close();
});

const noop = () => {};
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };

function track<T extends WorkflowHandle & { firstExecutionRunId: string }>(handle: T): T {
  started.push({ workflowId: handle.workflowId, runId: handle.firstExecutionRunId });
  return handle;
}

const input = (task: string): AgentInput => ({ task, model: 'script', tools: TOOLS.map((t) => t.name) });

describe('AgentPlugin in a team’s worker', () => {
  it('gives the client the codec, once, before the team’s own', () => {
    expect(client.options.dataConverter.payloadCodecs?.some((c) => c instanceof GzipPayloadCodec)).toBe(true);
    const teamCodec = { encode: async (p: Payload[]) => p, decode: async (p: Payload[]) => p };
    const alone = new Client({ connection: client.connection, dataConverter: { payloadCodecs: [teamCodec] }, plugins: [AgentPlugin.forClient(), AgentPlugin.forClient()] });
    const codecs = alone.options.dataConverter.payloadCodecs ?? [];
    // Compress, then encrypt (a pass-through without keys, there to refuse an encrypted payload by its key id), then the team's.
    expect(codecs.length).toBe(3);
    expect(codecs[0]).toBeInstanceOf(GzipPayloadCodec);
    expect(codecs[1]).toBeInstanceOf(EncryptionPayloadCodec);
    expect(codecs[2]).toBe(teamCodec);
  });

  it('merges with the team’s own sinks and interceptors instead of replacing them', () => {
    const spanProcessor = { onStart: () => {}, onEnd: () => {}, forceFlush: async () => {}, shutdown: async () => {} };
    const plugin = new AgentPlugin({ ...pluginOptions(), tracing: { spanProcessor, resource: Resource.default() } });
    const audit = { log: { fn: () => {} } };
    const o = plugin.configureReplayWorker({ workflowsPath: TEAM_WORKFLOWS, sinks: { audit }, interceptors: { workflowModules: ['/team/interceptors.js'] } });
    expect(o.sinks?.audit).toBe(audit);
    expect(Object.keys(o.sinks ?? {}).sort()).toEqual(['audit', 'calls', 'exporter', 'trace']);
    expect(o.interceptors?.workflowModules?.[0]).toBe('/team/interceptors.js');
    expect(o.interceptors?.workflowModules?.[1]).toMatch(/telemetry\.ts$/);
    expect(o.dataConverter?.payloadCodecs?.[0]).toBeInstanceOf(GzipPayloadCodec);
  });

  it('runs the team’s workflow with its own activity, and agentRun by name with a tool that reads the team’s memory', async () => {
    const team = track(await client.workflow.start(greeting, { taskQueue, workflowId: `greeting-${randomUUID().slice(0, 8)}`, args: ['ada'] }));
    expect(await team.result()).toBe('hello ada');
    store.set('k1', 'the answer is 42');
    const run = track(
      await client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `plugin-recall-${randomUUID().slice(0, 8)}`, args: [input(script([[{ name: 'recall', args: { key: 'k1' } }]]))] }),
    );
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', output: 'Done. The last tool said: k1: the answer is 42', toolRuns: 1 });
  });

  it('a write tool parks for approval; approved it writes into the team’s memory, rejected it does not', async () => {
    const approved = track(
      await client.workflow.start(agentRun, { taskQueue, workflowId: `plugin-approve-${randomUUID().slice(0, 8)}`, args: [input(script([[{ name: 'remember', args: { key: 'k2', text: 'from the agent' } }]]))] }),
    );
    const parked = await waitForApproval(approved, 's0_0');
    expect(parked.interruption).toMatchObject({ type: 'approval', toolName: 'remember' });
    expect(store.has('k2')).toBe(false);
    await approved.executeUpdate(decideUpdate, { args: [{ callId: 's0_0', decision: 'approve', by: 'alice' }] });
    expect(await approved.result()).toMatchObject({ status: 'completed', output: 'Done. The last tool said: remembered k2' });
    expect(store.get('k2')).toBe('from the agent');

    const rejected = track(
      await client.workflow.start(agentRun, { taskQueue, workflowId: `plugin-reject-${randomUUID().slice(0, 8)}`, args: [input(script([[{ name: 'remember', args: { key: 'k3', text: 'no' } }]]))] }),
    );
    await waitForApproval(rejected, 's0_0');
    await rejected.executeUpdate(decideUpdate, { args: [{ callId: 's0_0', decision: 'reject', by: 'bob', reason: 'not now' }] });
    expect((await rejected.result()).status).toBe('completed');
    expect(store.has('k3')).toBe(false);
  });

  it('a run started without tools (as `temporal workflow start` starts one) is offered the team’s tools only, never delete_file, and its workspace starts empty', async () => {
    const ws = `team-ws-${randomUUID().slice(0, 8)}`;
    const run = track(
      await client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue,
        workflowId: `plugin-defaults-${randomUUID().slice(0, 8)}`,
        // No `tools`: the run gets what the worker offers.
        args: [{ task: script([[{ name: 'recall', args: { key: 'k9' } }]]), model: 'script', workspace: ws }],
      }),
    );
    expect(await run.result()).toMatchObject({ status: 'completed', toolRuns: 1 });
    const cfg = await run.query(configQuery);
    expect(cfg.tools).toEqual(['recall', 'remember', 'wait_for_stop']);
    // The tool ran in the run's workspace, which holds no demo files (access.log, errors.log, notes.txt).
    expect(readdirSync(join(workspace, ws))).toEqual([]);
  });

  it('builtinTools: true (or AGENT_BUILTIN_TOOLS=true) offers the built-ins beside the team’s tools; a bad AGENT_BUILTIN_TOOLS or seedFiles is refused naming it', async () => {
    const offered = async (options: AgentPluginOptions): Promise<string[]> => {
      const plugin = new AgentPlugin(options);
      // What Worker.create asks of it, without a worker (which would hold the connection) or a bundle.
      await plugin.configureWorker({ connection, taskQueue: `offer-${randomUUID().slice(0, 8)}`, activities: { ...teamActivities } });
      const names = plugin.summary()?.toolNames ?? [];
      await plugin.close();
      return names;
    };
    expect(await offered({ ...pluginOptions(), builtinTools: true })).toEqual(['list_files', 'read_file', 'delete_file', 'scan_archive', 'research', 'recall', 'remember', 'wait_for_stop']);
    const saved = process.env.AGENT_BUILTIN_TOOLS;
    try {
      process.env.AGENT_BUILTIN_TOOLS = 'true';
      expect(await offered(pluginOptions())).toContain('delete_file');
      // The option wins over the variable.
      expect(await offered({ ...pluginOptions(), builtinTools: false })).not.toContain('delete_file');
      process.env.AGENT_BUILTIN_TOOLS = 'sure';
      expect(() => new AgentPlugin(pluginOptions())).toThrow('AGENT_BUILTIN_TOOLS must be true or false (1/0, yes/no), got "sure"');
    } finally {
      if (saved === undefined) delete process.env.AGENT_BUILTIN_TOOLS;
      else process.env.AGENT_BUILTIN_TOOLS = saved;
    }
    expect(() => new AgentPlugin({ ...pluginOptions(), seedFiles: { 'a.txt': 3 as unknown as string } })).toThrow(/^AgentPlugin option seedFiles\.a\.txt must be a string/);
  });

  it('runs agentRun as a child of the team’s workflow, with a typed result', async () => {
    store.set('k4', 'child data');
    const parent = track(await client.workflow.start(review, { taskQueue, workflowId: `review-${randomUUID().slice(0, 8)}`, args: [input(script([[{ name: 'recall', args: { key: 'k4' } }]]))] }));
    const r = await parent.result();
    // Typed without a cast: RunResult's fields.
    const output: string | null = r.agent.output;
    expect(output).toBe('Done. The last tool said: k4: child data');
    expect(r.summary).toBe('completed after 2 turns: Done. The last tool said: k4: child data');
  });

  it('the parent’s cancellation reaches the child agent’s running tool', async () => {
    const parent = track(await client.workflow.start(review, { taskQueue, workflowId: `review-stop-${randomUUID().slice(0, 8)}`, args: [input(script([[{ name: 'wait_for_stop', args: {} }]]))] }));
    await waitFor('the tool to start', () => stops.started > 0);
    const child = client.workflow.getHandle<typeof agentRun>(`${parent.workflowId}-agent`);
    expect((await child.query(statusQuery)).status).toBe('running');
    await parent.cancel();
    await waitFor('the Stop to reach the tool', () => stops.aborted);
    // The child ends as a stopped run; the parent, cancelled, fails with the cancellation.
    const childResult = await child.result();
    expect(childResult).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled' } });
    const outcome = await parent.result().then(
      (r) => ({ completed: r.agent.status }),
      (err: unknown) => ({ failed: err instanceof WorkflowFailedError ? err.cause?.name : String(err) }),
    );
    expect(outcome).toEqual({ completed: 'interrupted' });
  });
});

describe('bad input at Worker.create: one error naming it, and no worker polls', () => {
  const good = remember;
  /** Worker.create with the plugin on a queue of its own: the error, after checking nobody polls that queue. */
  async function refusal(options: AgentPluginOptions | (() => AgentPluginOptions), extra: Partial<WorkerOptions> = {}, namespace = 'default'): Promise<string> {
    const queue = `bad-${randomUUID().slice(0, 8)}`;
    const err = await (async () =>
      Worker.create({
        connection,
        namespace,
        taskQueue: queue,
        workflowsPath: TEAM_WORKFLOWS,
        activities: { ...teamActivities },
        ...extra,
        plugins: [new AgentPlugin(typeof options === 'function' ? options() : options)],
      }))().then(
      () => null,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(err, 'Worker.create should have refused').not.toBeNull();
    expect(await livePollers(connection, namespace, queue, null)).toEqual([]);
    return err ?? '';
  }

  it('a tool whose parameters do not compile', async () => {
    const bad: ToolDefinition = { ...good, name: 'bad_schema', parameters: { type: 'object', properties: { n: { type: 'integr' } } } };
    expect(await refusal({ ...pluginOptions(), tools: [recall, bad] })).toBe(
      'AgentPlugin option tools[1]: tool bad_schema: parameters do not compile: properties.n.type: "integr" is not a JSON Schema type (string, number, integer, boolean, object, array, null)',
    );
    const badPattern: ToolDefinition = { ...good, name: 'bad_pattern', parameters: { type: 'object', properties: { n: { type: 'string', pattern: '([a-z' } } } };
    expect(await refusal({ ...pluginOptions(), tools: [badPattern] })).toMatch(/^AgentPlugin option tools\[0\]: tool bad_pattern: parameters do not compile: properties\.n\.pattern: "\(\[a-z" is not a regular expression/);
    const badRef: ToolDefinition = { ...good, name: 'bad_ref', parameters: { type: 'object', properties: { n: { $ref: '#/$defs/missing' } } } };
    expect(await refusal({ ...pluginOptions(), tools: [badRef] })).toBe('AgentPlugin option tools[0]: tool bad_ref: parameters do not compile: properties.n.$ref: $ref "#/$defs/missing" points to nothing in the schema');
  });

  it('two tools of one name, and a tool named like a built-in', async () => {
    expect(await refusal({ ...pluginOptions(), tools: [recall, remember, { ...good, name: 'recall' }] })).toBe('two tools are named recall (AgentPlugin option tools[0] and AgentPlugin option tools[2]); rename one');
    expect(await refusal({ ...pluginOptions(), tools: [{ ...good, name: 'read_file' }] })).toBe('AgentPlugin option tools[0]: tool read_file has the name of a built-in tool; rename it');
  });

  it('an option of the wrong type, or unknown', async () => {
    expect(await refusal(() => ({ ...pluginOptions(), heartbeatEveryMs: '5s' }) as unknown as AgentPluginOptions)).toBe('AgentPlugin option heartbeatEveryMs must be a positive integer, got "5s"');
    expect(await refusal(() => ({ ...pluginOptions(), model: { baseUrl: 'localhost:8787' } }))).toBe('AgentPlugin option model.baseUrl must be an http: or https: URL, got "localhost:8787"');
    expect(await refusal(() => ({ ...pluginOptions(), workspce: '/tmp/x' }) as unknown as AgentPluginOptions)).toMatch(/^AgentPlugin option workspce is not an option \(known: model, workspace, tools, /);
    expect(await refusal({ ...pluginOptions(), only: ['recall', 'nope'] })).toMatch(/^AgentPlugin option only names nope, which no tool source offers \(offered: recall, remember, wait_for_stop/);
    expect(await refusal({ ...pluginOptions(), runDefaults: { requireArgsHash: ['remembr'] } })).toMatch(/^AgentPlugin option runDefaults\.requireArgsHash names "remembr", which this worker does not offer/);
    // The team's own options that would break the harness, or be replaced by it.
    expect(await refusal(pluginOptions(), { activities: { ...teamActivities, runTool: async () => 'mine' } })).toBe(
      "Worker.create's activities include runTool, the name of the harness's activities (AgentPlugin adds them): rename the team's",
    );
    expect(await refusal(pluginOptions(), { maxCachedWorkflows: 0 })).toMatch(/^Worker\.create's maxCachedWorkflows: 0 is refused by AgentPlugin: /);
  });

  it('a namespace without the search attributes, which the plugin may not create', async () => {
    const namespace = `plugin-ns-${randomUUID().slice(0, 8)}`;
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    // The namespace cache lags its creation.
    await waitFor(`namespace ${namespace}`, () => connection.workflowService.describeNamespace({ namespace }).then(() => true, () => false));
    const err = await refusal({ ...pluginOptions(), searchAttributes: 'check' }, {}, namespace);
    expect(err).toMatch(new RegExp(`^namespace ${namespace} lacks the search attributes .+ that every run sets, and AgentPlugin option searchAttributes: 'check': this worker does not create them`));
    expect(err).toContain(`temporal operator search-attribute create --namespace ${namespace}`);
  });

  it('a queue whose workers offer other tools: refused after the MCP server was started, which is stopped again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugin-mcp-'));
    const root = join(dir, 'files');
    mkdirSync(root);
    const mcp = { servers: { fs: { command: process.execPath, args: ['--import', 'tsx', join(PROJECT_ROOT, 'test/mcp/fs-server.ts'), '--root', root, '--record', join(dir, 'record.jsonl')], cwd: PROJECT_ROOT } } };
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify(mcp));
    // `worker` polls `taskQueue` with TOOLS; this one would add the MCP server's tools there.
    const err = await Worker.create({ connection, taskQueue, workflowsPath: TEAM_WORKFLOWS, plugins: [new AgentPlugin({ ...pluginOptions(), mcp: join(dir, 'mcp.json') })] }).then(
      () => null,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(err).toMatch(new RegExp(`^task queue ${taskQueue} is polled by worker\\(s\\) offering other tools than this one .+ AgentPlugin option toolsetCheck: 'warn' starts it anyway\\.$`));
    expect(mcpServersRunning()).toEqual([]);
  });
});

/** This process's children running the MCP test server (a stdio server is one). */
function mcpServersRunning(): string[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch {
    // ps exits 1 when it lists nothing.
  }
  return out.split('\n').filter((l) => l.includes('fs-server.ts'));
}
