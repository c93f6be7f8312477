// Deploying while runs are in flight, for real: two worker processes of one
// Worker Deployment (build ids v1 and v2) on one task queue. A run started
// while v1 is current parks on an approval; v2 is deployed and made current;
// a second run starts on v2; both are approved and finish — the first one
// entirely on v1 (PINNED), though v2 was current for the rest of its life.
// Which build ran each step is read from the runs' histories.
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../node/config.js';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { toolsetHash } from '../worker/tool-routing.js';
import { approveSignal } from '../common/run-messages.js';
import { AGENT_AWAITING_CALL } from '../common/search-attributes.js';
import { freshWorkspace, useHarness, waitFor } from './helpers/harness.js';
import { startWorkerProcess, type WorkerProcess } from './helpers/worker-process.js';
import type { agentRun } from '../workflows/index.js';

const { EventType, VersioningBehavior, TaskQueueType, RoutingConfigUpdateState } = proto.temporal.api.enums.v1;

const h = useHarness({ worker: false });
const workers: WorkerProcess[] = [];
const task = 'Which file mentions a timeout?';
type Behavior = 'PINNED' | 'AUTO_UPGRADE';

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
});

/**
 * One Worker Deployment on its own task queue (a queue follows one
 * deployment's routing), with a fresh name: the suite's server is shared.
 */
function deployment(behavior: Behavior) {
  const deploymentName = `agent-harness-vt-${randomUUID().slice(0, 8)}`;
  const taskQueue = `${h.taskQueue}-${behavior.toLowerCase()}`;
  const svc = () => h.client.workflowService;
  return {
    deploymentName,
    /** A worker process polling as `<deployment>:<buildId>`; returns the identity it stamps on history. */
    async deploy(buildId: string): Promise<string> {
      const w = await startWorkerProcess({
        taskQueue,
        traceDir: h.traceDir,
        workspaceRoot: h.workspaceRoot,
        env: { WORKER_DEPLOYMENT_NAME: deploymentName, WORKER_BUILD_ID: buildId, WORKER_VERSIONING_BEHAVIOR: behavior },
      });
      workers.push(w);
      // The worker's identity (the SDK's pid@host and its tool set); activities' started events carry it.
      return `${w.child.pid}@${hostname()} tools:${toolsetHash(BUILTIN_TOOLS.map((t) => t.name))}`;
    },
    /**
     * Makes a build current as `temporal worker deployment set-current-version`
     * does, once the server knows the build polls our queue for both task types
     * (it refuses a version missing a queue the current one has), and returns
     * when the new routing has reached the queue, so the next start goes there.
     */
    async setCurrent(buildId: string): Promise<void> {
      const deploymentVersion = { deploymentName, buildId };
      await waitFor(`${buildId} to poll ${taskQueue} for workflow and activity tasks`, async () => {
        const d = await svc().describeWorkerDeploymentVersion({ namespace: 'default', deploymentVersion }).catch(() => null);
        const types = new Set((d?.workerDeploymentVersionInfo?.taskQueueInfos ?? []).filter((q) => q.name === taskQueue).map((q) => q.type));
        return types.has(TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW) && types.has(TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY);
      });
      await svc().setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName, buildId, identity: 'worker-versioning.test' });
      await waitFor(`${buildId} current, routing propagated`, async () => {
        const info = (await svc().describeWorkerDeployment({ namespace: 'default', deploymentName })).workerDeploymentInfo;
        return info?.routingConfig?.currentDeploymentVersion?.buildId === buildId && info.routingConfigUpdateState === RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_COMPLETED;
      });
    },
    /** Waits on committed state (the search attribute the park upserts), not on a query that may run ahead. */
    async startParked(): Promise<WorkflowHandle> {
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue,
        workflowId: `versioned-${randomUUID().slice(0, 8)}`,
        args: [{ task, model: 'destructive', workspace: freshWorkspace() }],
      });
      await waitFor(`${handle.workflowId} parked on c2`, async () => (await handle.describe()).typedSearchAttributes.get(AGENT_AWAITING_CALL) === 'c2');
      return handle;
    },
  };
}

/** The build (and declared behaviour) of each workflow task, and the worker of each activity, split at the approval. */
async function whoRan(handle: WorkflowHandle<typeof agentRun>) {
  const events = (await handle.fetchHistory()).events ?? [];
  const approvedAt = events.findIndex((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  const split = (from: number, to: number) => ({
    tasks: events.slice(from, to).filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).map(({ workflowTaskCompletedEventAttributes: a }) => ({
      deployment: a?.deploymentVersion?.deploymentName,
      buildId: a?.deploymentVersion?.buildId,
      behavior: a?.versioningBehavior,
    })),
    activities: events.slice(from, to).filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED).map((e) => e.activityTaskStartedEventAttributes?.identity),
  });
  expect(approvedAt).toBeGreaterThan(0);
  return { before: split(0, approvedAt), after: split(approvedAt, events.length) };
}

/** Every task of `part` by `buildId` of `deploymentName` declaring `behavior`, every activity by `identity`. */
function expectRanOn(part: Awaited<ReturnType<typeof whoRan>>['before'], deploymentName: string, buildId: string, behavior: number, identity: string) {
  expect(part.tasks.length).toBeGreaterThan(0);
  for (const t of part.tasks) expect(t).toEqual({ deployment: deploymentName, buildId, behavior });
  expect(part.activities.length).toBeGreaterThan(0);
  expect(new Set(part.activities)).toEqual(new Set([identity]));
}

const done = { status: 'completed', turns: 3, toolRuns: 2, output: 'Deleted access.log to free space.' };

describe('Worker Versioning: a deploy while a run is parked', () => {
  it('PINNED: run 1 finishes on v1 though v2 became current; run 2 runs on v2', async () => {
    const d = deployment('PINNED');
    const v1 = await d.deploy('v1');
    await d.setCurrent('v1');
    const run1 = await d.startParked();

    // The deploy: v2 comes up beside v1 and takes new runs; v1 stays up to drain.
    const v2 = await d.deploy('v2');
    await d.setCurrent('v2');
    const run2 = await d.startParked();

    await Promise.all([run1, run2].map((r) => r.signal(approveSignal, { callId: 'c2', by: 'alice' })));
    expect(await run1.result()).toMatchObject(done);
    expect(await run2.result()).toMatchObject(done);

    const PINNED = VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;
    for (const [run, buildId, identity] of [[run1, 'v1', v1], [run2, 'v2', v2]] as const) {
      const { before, after } = await whoRan(run);
      expectRanOn(before, d.deploymentName, buildId, PINNED, identity);
      expectRanOn(after, d.deploymentName, buildId, PINNED, identity);
      const versioning = (await run.describe()).raw.workflowExecutionInfo?.versioningInfo;
      expect(versioning?.behavior).toBe(PINNED);
      expect(versioning?.deploymentVersion).toMatchObject({ deploymentName: d.deploymentName, buildId });
    }
    // Two worker processes start here: generous for a loaded 2-core machine.
  }, 240_000);

  it('AUTO_UPGRADE: the parked run moves to v2 at its first task after the switch', async () => {
    const d = deployment('AUTO_UPGRADE');
    const v1 = await d.deploy('v1');
    await d.setCurrent('v1');
    const run = await d.startParked();
    const v2 = await d.deploy('v2');
    await d.setCurrent('v2');

    await run.signal(approveSignal, { callId: 'c2', by: 'alice' });
    expect(await run.result()).toMatchObject(done);
    // v2 replays v1's history here: fine for the same code, a nondeterminism
    // error for a loop change without patched(). That is what AUTO_UPGRADE asks of a change.
    const AUTO_UPGRADE = VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE;
    const { before, after } = await whoRan(run);
    expectRanOn(before, d.deploymentName, 'v1', AUTO_UPGRADE, v1);
    expectRanOn(after, d.deploymentName, 'v2', AUTO_UPGRADE, v2);
  }, 240_000);
});

describe('WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID, WORKER_VERSIONING_BEHAVIOR', () => {
  it('neither: an unversioned worker; both: PINNED unless AUTO_UPGRADE is asked for', () => {
    expect(loadConfig({}).versioning).toBeNull();
    // docker-compose passes unset variables through as empty strings.
    expect(loadConfig({ WORKER_DEPLOYMENT_NAME: '', WORKER_BUILD_ID: '', WORKER_VERSIONING_BEHAVIOR: '' }).versioning).toBeNull();
    expect(loadConfig({ WORKER_DEPLOYMENT_NAME: 'agents', WORKER_BUILD_ID: '2024-06-01' }).versioning).toEqual({ deploymentName: 'agents', buildId: '2024-06-01', defaultBehavior: 'PINNED' });
    expect(loadConfig({ WORKER_DEPLOYMENT_NAME: 'agents', WORKER_BUILD_ID: 'b7', WORKER_VERSIONING_BEHAVIOR: 'AUTO_UPGRADE' }).versioning?.defaultBehavior).toBe('AUTO_UPGRADE');
  });

  it('only one of the pair, a bad behaviour or a name the server refuses: an error naming the variable', () => {
    expect(() => loadConfig({ WORKER_BUILD_ID: 'v2' })).toThrow(/WORKER_BUILD_ID is set but WORKER_DEPLOYMENT_NAME is not/);
    expect(() => loadConfig({ WORKER_DEPLOYMENT_NAME: 'agents' })).toThrow(/WORKER_DEPLOYMENT_NAME is set but WORKER_BUILD_ID is not/);
    expect(() => loadConfig({ WORKER_VERSIONING_BEHAVIOR: 'PINNED' })).toThrow(/WORKER_VERSIONING_BEHAVIOR is set/);
    expect(() => loadConfig({ WORKER_DEPLOYMENT_NAME: 'agents', WORKER_BUILD_ID: 'v2', WORKER_VERSIONING_BEHAVIOR: 'pinned' })).toThrow(/WORKER_VERSIONING_BEHAVIOR must be one of PINNED, AUTO_UPGRADE/);
    expect(() => loadConfig({ WORKER_DEPLOYMENT_NAME: 'agents.prod', WORKER_BUILD_ID: 'v2' })).toThrow(/WORKER_DEPLOYMENT_NAME must not contain/);
  });
});
