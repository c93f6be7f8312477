// The `research` tool: a whole child agent run with its own transcript and
// limits, cancelled with its parent. The parent pays for it.
import * as wf from '@temporalio/workflow';
import type { agentRun } from './agent-run';
import { RESEARCH_LIMITS } from './defaults';
import { capToolResult } from './loop';
import type { RunConfig, ToolOutcome, Usage } from './types';

export interface ResearchOutcome {
  outcome: ToolOutcome;
  costUsd: number;
  usage: Usage;
}

export async function runResearch(cfg: RunConfig, childId: string, question: string, budgetUsd: number): Promise<ResearchOutcome> {
  // By type name: importing the workflow function here would make a module cycle.
  const child = await wf.executeChild<typeof agentRun>('agentRun', {
    workflowId: childId,
    args: [
      {
        task: question,
        model: cfg.model,
        tools: ['list_files', 'read_file'],
        // Never more than the parent has left: the parent's budget pays for the whole tree.
        limits: { maxTurns: RESEARCH_LIMITS.maxTurns, maxBudgetUsd: budgetUsd },
        toolErrors: cfg.toolErrors,
        workspace: cfg.workspace,
        pricing: cfg.pricing,
        maxToolResultChars: cfg.maxToolResultChars,
      },
    ],
    // One Stop cancels the whole tree.
    parentClosePolicy: 'REQUEST_CANCEL',
  });
  const outcome: ToolOutcome =
    child.status === 'completed'
      ? { ok: true, content: capToolResult(child.output ?? '', cfg.maxToolResultChars) }
      : { ok: false, error: `the research sub-agent stopped with ${child.status}: ${child.error ?? 'no answer'}`, permanent: false };
  return { outcome, costUsd: child.costUsd, usage: child.usage };
}
