// The team's client: Temporal's own, and the typed agent client over it.
import { Client, Connection } from '@temporalio/client';
import { AgentClient, agentDataConverter } from 'temporal-agent-harness/client';

export async function connectTeamClient(address: string, taskQueue: string): Promise<{ client: Client; agents: AgentClient; close(): Promise<void> }> {
  const connection = await Connection.connect({ address });
  // The harness's payload codec, so the client reads what its workers write.
  const client = new Client({ connection, dataConverter: agentDataConverter() });
  return { client, agents: new AgentClient({ client, taskQueue }), close: () => connection.close() };
}
