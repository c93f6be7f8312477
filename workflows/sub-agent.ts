// A sub-agent tool (like `research`): a whole child agent run with its own
// transcript and limits, cancelled with its parent. The parent pays for it.
import * as wf from '@temporalio/workflow';
import type { SubAgentSpec } from '../common/tool-spec.js';
import { capToolResult } from '../common/transcript-text.js';
import type { AgentInput, RunConfig, RunResult, ToolOutcome, Usage } from '../common/contract.js';

export interface SubAgentOutcome {
  outcome: ToolOutcome;
  costUsd: number;
  usage: Usage;
}

export async function runSubAgent(cfg: RunConfig, sub: SubAgentSpec, toolName: string, childId: string, task: string, budgetUsd: number): Promise<SubAgentOutcome> {
  // By type name and signature: importing the workflow function here would make a module cycle.
  const child = await wf.executeChild<(input: AgentInput) => Promise<RunResult>>('agentRun', {
    workflowId: childId,
    args: [
      {
        task,
        model: cfg.model,
        tools: sub.tools,
        // Never more than the parent has left: the parent's budget pays for the whole tree.
        limits: { maxTurns: sub.maxTurns, maxBudgetUsd: budgetUsd, ...hardLimits(cfg) },
        // A hard budget's child runs under the same rules, and continues as new where its parent would.
        ...(cfg.hardBudget ? { continueAsNewAtHistoryBytes: cfg.continueAsNewAtHistoryBytes } : {}),
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
      : { ok: false, error: `the ${toolName} sub-agent stopped with ${child.status}: ${child.error ?? 'no answer'}`, permanent: false };
  return { outcome, costUsd: child.costUsd, usage: child.usage };
}

/** A hard budget's settings for its child (soft parents give none: their children's input is what it always was). */
function hardLimits(cfg: RunConfig): Pick<NonNullable<AgentInput['limits']>, 'budgetMode' | 'minReplyTokens' | 'maxReplyTokens'> {
  if (!cfg.hardBudget) return {};
  return { budgetMode: 'hard', minReplyTokens: cfg.hardBudget.minReplyTokens, maxReplyTokens: cfg.hardBudget.maxReplyTokens };
}
