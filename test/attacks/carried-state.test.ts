// The carried state (agentRun's hidden second argument) as a surface: a caller
// who passes one at start, an execution continued with a state of a version
// this worker does not know, and one continued with 0.1's unversioned shape.
// Real dev server, real workers, the scripted provider.
import { Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { bundleWorkflowCode, NativeConnection, type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataConverter } from '../../node/payload-codec.js';
import { statusQuery } from '../../common/run-messages.js';
import { createAgentWorker } from '../../worker/create-worker.js';
import { useHarness } from '../helpers/harness.js';

const h = useHarness();
const FIXTURE = fileURLToPath(new URL('../fixtures/continue-into/workflows.ts', import.meta.url));
const task = 'Which file mentions a timeout?';

// A worker of its own, on a queue of its own, running the fixture's bundle
// (agentRun and continueIntoAgentRun); its client records nothing for the
// harness's replay, whose bundle lacks the fixture's workflow.
let client: Client;
let worker: Worker;
let workerDone: Promise<void>;
const taskQueue = `carried-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  const { code } = await bundleWorkflowCode({ workflowsPath: FIXTURE, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } });
  client = new Client({ connection: h.client.connection, dataConverter: dataConverter() });
  worker = await createAgentWorker({
    connection: await NativeConnection.connect({ address: h.address }),
    taskQueue,
    plugin: { model: { baseUrl: h.providerUrl }, workspace: h.workspaceRoot, traceDir: h.traceDir },
    workflowBundle: { code },
  });
  workerDone = worker.run();
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await workerDone;
});

/** The run's failure: its type and message. */
async function failureOf(result: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await result.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

/** The state a real run carried into its second execution, as agentRun's second argument. */
async function realCarriedState(): Promise<{ input: unknown; carried: Record<string, unknown> }> {
  const handle = await h.start({ task, model: 'plan', continueAsNewAtHistoryBytes: 1024 });
  await handle.result();
  const runs = [];
  for await (const w of h.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) runs.push(w);
  const second = runs.find((w) => w.runId !== handle.firstExecutionRunId && w.status.name === 'CONTINUED_AS_NEW');
  if (!second) throw new Error('the run did not continue as new twice');
  const history = await h.client.workflow.getHandle(handle.workflowId, second.runId).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  const [input, carried] = await decodeArrayFromPayloads(h.client.options.loadedDataConverter, payloads);
  return { input, carried: carried as Record<string, unknown> };
}

describe('the carried state', () => {
  it('passed at start (not by continue-as-new) fails the run as InvalidInput: no decision or spend can be injected', async () => {
    const { carried } = await realCarriedState();
    const workflowId = `carried-at-start-${randomUUID().slice(0, 8)}`;
    const handle = await h.client.workflow.start('agentRun', { taskQueue: h.taskQueue, workflowId, args: [{ task, model: 'plan' }, carried] });
    h.track(workflowId);
    const err = await failureOf(handle.result());
    expect(err.type).toBe('InvalidInput');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toMatch(/agentRun takes one argument, the input; a second is the run's own state across continue-as-new/);
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'failed', errorType: 'InvalidInput', turns: 0 });
  });

  it('of a version this worker does not know fails the continued run, non-retryable, naming the version', async () => {
    const { input, carried } = await realCarriedState();
    const workflowId = `carried-v99-${randomUUID().slice(0, 8)}`;
    const handle = await client.workflow.start('continueIntoAgentRun', { taskQueue, workflowId, args: [input, { ...carried, version: 99 }] });
    const err = await failureOf(handle.result());
    expect(err.type).toBe('CarriedStateUnreadable');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('its carried state has version 99, which this worker does not know (it reads version 3');
    // Failed at once, as a refused input is: the status says so and no turn was taken.
    const status = await client.workflow.getHandle(workflowId).query(statusQuery);
    expect(status).toMatchObject({ status: 'failed', errorType: 'CarriedStateUnreadable' });
    expect(status.reason).toContain('version 99');
  });

  it('in 0.1’s unversioned shape is upgraded once at start, and the run finishes as it would have', async () => {
    const plain = await h.run({ task, model: 'plan' });
    const { input, carried } = await realCarriedState();
    expect(carried.version).toBe(3);
    // What 0.1 wrote: no version, and the fields that were absent when empty, absent.
    const { version: _v, steers: _s, usedSteerSignatures: _u, ...old } = carried;
    const { budgetRaises: _b, usageOverReservation: _o, usageEstimatedTurns: _e, ...state } = old.state as Record<string, unknown>;
    const handle = await client.workflow.start('continueIntoAgentRun', { taskQueue, workflowId: `carried-01-${randomUUID().slice(0, 8)}`, args: [input, { ...old, state }] });
    const r = (await handle.result()) as typeof plain;
    expect({ ...r, runId: '', workflowId: '' }).toEqual({ ...plain, runId: '', workflowId: '' });
  });
});
