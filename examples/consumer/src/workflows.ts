// The team's workflows module: its own workflow, and the agent beside it.
// `agentRun` is re-exported so this worker also runs agents started by name
// (`temporal workflow start --type agentRun`).
import { CancellationScope, CancelledFailure, executeChild, workflowInfo } from '@temporalio/workflow';
import { agentRun, type AgentInput, type RunResult } from 'temporal-agent-harness/workflow';

export { agentRun };

export interface TriageResult {
  ticketId: string;
  agent: RunResult;
}

/** The script the scripted model follows: look the ticket up, then close it (a write that asks a person). */
export function triageInput(ticketId: string): AgentInput {
  const script = [[{ name: 'lookup_ticket', args: { id: ticketId } }], [{ name: 'close_ticket', args: { id: ticketId, note: 'resolved by the agent' } }]];
  return { task: `Triage ticket ${ticketId}. script: ${JSON.stringify(script)}`, model: 'script', tools: ['lookup_ticket', 'close_ticket'], limits: { maxTurns: 6 } };
}

/**
 * The team's own workflow: triage runs as an agent child; its result comes
 * back typed. Cancelled while its agent runs, it ends CANCELED too (the agent
 * ends `interrupted`, a normal return: docs/plugin.md, "The agent as a child").
 */
export async function triageTicket(ticketId: string): Promise<TriageResult> {
  const agent = await executeChild(agentRun, { workflowId: `${workflowInfo().workflowId}-agent`, args: [triageInput(ticketId)] });
  if (agent.status === 'interrupted' && agent.interruption?.type === 'cancelled' && CancellationScope.current().consideredCancelled) {
    throw new CancelledFailure(agent.interruption.reason ?? 'triage was cancelled while its agent ran');
  }
  return { ticketId, agent };
}
