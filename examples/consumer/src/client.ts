// The team's client: Temporal's own, and the typed agent client over it.
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from 'temporal-agent-harness/client';

export async function connectTeamClient(address: string, taskQueue: string): Promise<{ client: Client; agents: AgentClient; close(): Promise<void> }> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  return { client, agents: new AgentClient({ client, taskQueue }), close: () => connection.close() };
}
