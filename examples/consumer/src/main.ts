// Drives the team's project end to end against a Temporal server and a
// model endpoint (Anthropic's Messages API through @ai-sdk/anthropic 4.x), then prints one JSON report on stdout: the
// agent as a child of the team's workflow with an approval, a rejection, a
// steer and a Stop, all through AgentClient. Run under plain node by the
// harness's test suite (test/consumer.test.ts), which reads the report.
import { randomUUID } from 'node:crypto';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { RunNotFoundError, type AgentClient, type AgentRunHandle } from 'temporal-agent-harness/client';
import { connectTeamClient } from './client.js';
import { ticketTools, type Ticket } from './tickets.js';
import { startTeamWorker } from './worker.js';
import { triageInput, triageTicket } from './workflows.js';

const address = need('TEMPORAL_ADDRESS');
const modelBaseUrl = need('LLM_BASE_URL');
const workspace = need('AGENT_WORKSPACE');
const taskQueue = `team-${randomUUID().slice(0, 8)}`;

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

/** The handle of a run another workflow starts (the agent child), taken at once (getHandle is lazy), returned once the parent has started the run. */
async function handleOnceStarted(agents: AgentClient, workflowId: string): Promise<AgentRunHandle> {
  const handle = agents.getHandle(workflowId);
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await handle.describe();
      return handle;
    } catch (err) {
      if (!(err instanceof RunNotFoundError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Waits until the run is parked on a person's decision about `callId`. */
async function parkedOn(handle: AgentRunHandle, callId: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = await handle.status();
    if (status.interruption?.type === 'approval' && status.interruption.callId === callId) return;
    if (Date.now() > deadline) throw new Error(`run ${handle.workflowId} never parked on ${callId}: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const store = new Map<string, Ticket>(['T-1', 'T-2', 'T-3', 'T-4'].map((id) => [id, { id, title: `ticket ${id}`, status: 'open' }]));
// The tools are built once here only to read their names: the worker builds its own over the same store.
const toolNames = ticketTools(store).map((t) => t.name);
const worker = await startTeamWorker({ address, taskQueue, modelBaseUrl, workspace, store });
const { client, agents, close } = await connectTeamClient(address, taskQueue);
const report: Record<string, unknown> = { toolNames };
// The agent runs, for whoever wants to look at (or replay) their histories.
const workflowIds: string[] = [];
report.workflowIds = workflowIds;
try {
  // 1. The agent as a child of the team's workflow; its write approved.
  const parent = await client.workflow.start(triageTicket, { taskQueue, workflowId: `triage-${randomUUID().slice(0, 8)}`, args: ['T-1'] });
  const child = await handleOnceStarted(agents, `${parent.workflowId}-agent`);
  await parkedOn(child, 's1_0');
  workflowIds.push(child.workflowId);
  const approved = await child.approve('s1_0', { by: 'alice' });
  const triage = await parent.result();
  report.child = { decision: approved, result: triage, ticket: store.get('T-1') };

  // 2. A rejection: the write never happens, the model reads why.
  const rejected = await agents.start(triageInput('T-2'), { workflowId: `reject-${randomUUID().slice(0, 8)}` });
  workflowIds.push(rejected.workflowId);
  await parkedOn(rejected, 's1_0');
  const rejection = await rejected.reject('s1_0', { by: 'bob', reason: 'the customer is still testing' });
  const rejectedResult = await rejected.result();
  const rejectedTranscript = await rejected.transcript();
  report.rejection = { decision: rejection, result: rejectedResult, ticket: store.get('T-2'), toolMessage: rejectedTranscript.find((m) => m.role === 'tool' && m.tool_call_id === 's1_0') };

  // 3. A steer while parked, then the approval: the next turn's prompt carries the person's message.
  const steered = await agents.start(triageInput('T-3'), { workflowId: `steer-${randomUUID().slice(0, 8)}` });
  workflowIds.push(steered.workflowId);
  await parkedOn(steered, 's1_0');
  await steered.steer('Mention the refund in the closing note.', { by: 'carol' });
  await steered.approve('s1_0', { by: 'carol' });
  const steeredResult = await steered.result();
  report.steer = { result: steeredResult, transcript: await steered.transcript(), ticket: store.get('T-3') };

  // 4. A Stop while parked: the run ends interrupted and the write never happens.
  const stopped = await agents.start(triageInput('T-4'), { workflowId: `stop-${randomUUID().slice(0, 8)}` });
  workflowIds.push(stopped.workflowId);
  await parkedOn(stopped, 's1_0');
  await stopped.cancel('not needed any more');
  report.stop = { result: await stopped.result(), ticket: store.get('T-4') };

  // 5. The team's parent cancelled while its agent child is parked: the child ends interrupted, the parent CANCELED.
  store.set('T-5', { id: 'T-5', title: 'ticket T-5', status: 'open' });
  const cancelledParent = await client.workflow.start(triageTicket, { taskQueue, workflowId: `triage-cancel-${randomUUID().slice(0, 8)}`, args: ['T-5'] });
  const cancelledChild = await handleOnceStarted(agents, `${cancelledParent.workflowId}-agent`);
  workflowIds.push(cancelledChild.workflowId);
  await parkedOn(cancelledChild, 's1_0');
  await cancelledParent.cancel();
  const parentEnd = await cancelledParent.result().then(
    () => 'completed',
    (err: unknown) => (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure ? 'cancelled' : `failed: ${String(err)}`),
  );
  report.parentCancelled = { parent: parentEnd, parentStatus: (await cancelledParent.describe()).status.name, child: await cancelledChild.result(), ticket: store.get('T-5') };
} finally {
  await close();
  await worker.shutdown();
}
process.stdout.write(`${JSON.stringify(report)}\n`);
