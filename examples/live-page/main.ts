// Serves the live page for the runs on a Temporal server:
//   TEMPORAL_ADDRESS=localhost:7233 npx tsx examples/live-page/main.ts
// then open the URL it prints with ?run=WORKFLOW_ID (LIVE_PAGE_PORT, default 8090).
import { Client, Connection } from '@temporalio/client';
import { AgentClient, agentDataConverter } from '../../client/index.js';
import { startLivePage } from './server.js';

const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
const agents = new AgentClient({ client: new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default', dataConverter: agentDataConverter() }) });
const page = await startLivePage(agents, Number(process.env.LIVE_PAGE_PORT ?? 8090));
console.log(`live page on ${page.url}/?run=WORKFLOW_ID`);
