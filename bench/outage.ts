// A run through a provider outage (default 10 minutes, OUTAGE_MINUTES): the
// scripted provider is `down` (every request reset) from the run's second
// model call until the bench clears it. Reports the Actions the run spent (by
// Cloud's rules from its history, and the server's own counter), heartbeats,
// and the time from the provider's return to the next call that answered.
// `npm run bench:outage` (about OUTAGE_MINUTES + 2 minutes, mostly idle).
import { randomUUID } from 'node:crypto';
import { addFault, clearFaults, providerRequests } from '../dev/provider/control.js';
import { statusQuery } from '../common/run-messages.js';
import { startingAttributes } from '../workflows/visibility.js';
import type { AgentInput } from '../common/contract.js';
import { countActions, describeActions } from './actions.js';
import { heartbeatsDuring, serverActionsDuring } from './server-metrics.js';
import { startBenchStack } from './stack.js';

const minutes = Number(process.env.OUTAGE_MINUTES ?? 10);
const log = (line: string): void => console.log(`[${new Date().toISOString()}] ${line}`);
const stack = await startBenchStack();
log('stack up');
try {
  await stack.worker.runUntil(measure());
} finally {
  await stack.close();
}

async function measure(): Promise<void> {
  const m = `[outage-${randomUUID().slice(0, 8)}]`;
  const input: AgentInput = { task: `Which file mentions a timeout? ${m}`, model: 'plan' };
  const clean = await stack.client.workflow.execute('agentRun', { taskQueue: stack.taskQueue, workflowId: `outage-clean-${randomUUID().slice(0, 8)}`, args: [{ ...input, task: input.task.replace('[outage-', '[clean-') }], typedSearchAttributes: startingAttributes(input) });
  const cleanHandle = stack.client.workflow.getHandle(String((clean as { workflowId: string }).workflowId));
  const cleanCount = countActions(await cleanHandle.fetchHistory());
  log('clean run done');
  await addFault(stack.providerUrl, { match: { taskIncludes: m, turn: 1 }, fault: { type: 'down', forMs: 24 * 3600_000 }, times: 1 });
  let backAt = 0;
  const { value: handle, actions } = await serverActionsDuring(stack.metricsUrl, async () => {
    const { value } = await heartbeatsDuring(stack.metricsUrl, async () => {
      const h = await stack.client.workflow.start('agentRun', { taskQueue: stack.taskQueue, workflowId: `outage-${randomUUID().slice(0, 8)}`, args: [input], typedSearchAttributes: startingAttributes(input) });
      const downAt = Date.now();
      while ((await h.query(statusQuery)).agentStatus !== 'waiting_for_model') await new Promise((r) => setTimeout(r, 500));
      log(`waiting_for_model after ${((Date.now() - downAt) / 1000).toFixed(1)} s`);
      await new Promise((r) => setTimeout(r, minutes * 60_000 - (Date.now() - downAt)));
      await clearFaults(stack.providerUrl, m);
      backAt = Date.now();
      log('provider back');
      await h.result();
      return h;
    });
    return value;
  });
  const requests = await providerRequests(stack.providerUrl, m);
  const resumed = requests.find((l) => l.turn === 1 && l.status === 200 && l.at >= backAt);
  const refused = requests.filter((l) => l.turn === 1 && l.status !== 200).length;
  const count = countActions(await handle.fetchHistory());
  const status = await handle.query(statusQuery);
  console.log(`outage of ${minutes} min: run ${status.agentStatus}; ${refused} refused model requests`);
  console.log(`the run: ${describeActions(count)}`);
  console.log(`the same run without the outage: ${describeActions(cleanCount)}`);
  console.log(`server's action counter during the outage run: ${JSON.stringify(actions)}`);
  console.log(`provider back -> next answered call: ${resumed ? ((resumed.at - backAt) / 1000).toFixed(1) : 'never'} s`);
}
