// A subscriber to a run's live stream in a process of its own, as a person's
// laptop or a web server would be: it knows only the Temporal address and the
// workflow id. Prints each item as one JSON line, then `{"end":true}`.
// Usage: tsx test/helpers/stream-subscriber.ts ADDRESS WORKFLOW_ID [FROM_OFFSET] [MAX_ITEMS]
import { Client, Connection } from '@temporalio/client';
import { AgentClient, RunNotFoundError, agentDataConverter } from '../../client/index.js';

const [address, workflowId, from = '0', max = ''] = process.argv.slice(2);
if (!address || !workflowId) throw new Error('usage: stream-subscriber ADDRESS WORKFLOW_ID [FROM_OFFSET] [MAX_ITEMS]');
const limit = max === '' ? Infinity : Number(max);
const connection = await Connection.connect({ address });
const agents = new AgentClient({ client: new Client({ connection, dataConverter: agentDataConverter() }) });
// A subscriber may be started before the run: it waits for the run to exist.
const handle = agents.getHandle(workflowId);
await (async () => {
  for (;;) {
    try {
      return await handle.describe();
    } catch (err) {
      if (!(err instanceof RunNotFoundError)) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
})();
let n = 0;
try {
  for await (const item of handle.events(Number(from))) {
    process.stdout.write(`${JSON.stringify({ ...item, receivedAt: Date.now() })}\n`);
    n += 1;
    if (n >= limit) break;
  }
  process.stdout.write(`${JSON.stringify({ end: true, items: n })}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) })}\n`);
}
// Exit at once: the output is complete, and nothing left open may keep the process (and its reader) waiting.
process.exit(0);
