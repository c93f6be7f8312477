// What a resumed run starts from: the stopped run's configuration, written
// back as a complete input, with what the new input sets on top. Complete, so
// a resume of a resume (of a resume…) carries the task, the model, the tools
// and every policy, not only what the last input happened to name. Pure: the
// workflow and the activities both use it.
import type { AgentInput, RunConfig } from './contract.js';

/** Which stopped runs a resume continues, in words (the workflow's check and the CLI's say the same). */
export const RESUMABLE_RULE = 'Only max_turns_exceeded, budget_exceeded and interrupted runs can be resumed, and runs that failed because the model provider was down (unreachable, 5xx, 429 or timing out)';

/** A resolved configuration as the input that resolves to it (defaults spelled out, so no worker's default can change it). */
export function inputOfConfig(cfg: RunConfig): AgentInput {
  return {
    task: cfg.task,
    model: cfg.model,
    // null written out: a run that had no system prompt keeps none, whatever the worker's default now.
    system: cfg.system,
    limits: {
      maxTurns: cfg.maxTurns,
      maxBudgetUsd: cfg.maxBudgetUsd,
      // A hard budget stays hard when its run is resumed (soft configurations carry no such field).
      ...(cfg.hardBudget ? { budgetMode: 'hard' as const, minReplyTokens: cfg.hardBudget.minReplyTokens, maxReplyTokens: cfg.hardBudget.maxReplyTokens } : {}),
      ...(cfg.approvalEscalateAfterMs !== undefined ? { approvalEscalateAfterMs: cfg.approvalEscalateAfterMs } : {}),
    },
    toolErrors: cfg.toolErrors,
    dedupe: cfg.dedupe,
    tools: [...cfg.tools],
    workspace: cfg.workspace,
    pricing: { ...cfg.pricing },
    approvalTimeoutMs: cfg.approvalTimeoutMs,
    ...(cfg.hardBudget ? { budgetTimeoutMs: cfg.hardBudget.budgetTimeoutMs } : {}),
    modelTimeoutMs: cfg.modelTimeoutMs,
    ...(cfg.modelOutageMs !== undefined ? { modelOutageMs: cfg.modelOutageMs } : {}),
    ...(cfg.toolOutageMs !== undefined ? { toolOutageMs: cfg.toolOutageMs } : {}),
    toolTimeoutMs: cfg.toolTimeoutMs,
    maxToolResultChars: cfg.maxToolResultChars,
    continueAsNewAtHistoryBytes: cfg.continueAsNewAtHistoryBytes,
    ...(cfg.debug ? { debug: true } : {}),
    context: cfg.context,
    resumeFrom: cfg.resumeFrom,
    ...(cfg.unknownOutcomes !== undefined ? { unknownOutcomes: cfg.unknownOutcomes } : {}),
    // A resume or a fork serves the same tenant as its source unless its own input gives another context.
    ...(cfg.runContext !== undefined ? { runContext: cfg.runContext } : {}),
  };
}

/**
 * A resumed run's input: the stopped run's, with what the new input sets on
 * top (limits above all, key by key). The transcript comes from the stopped
 * run, so its task is kept whatever the new input says.
 */
export function resumedInput(prior: AgentInput, next: AgentInput): AgentInput {
  const { task: _task, ...overrides } = next;
  const merged: AgentInput = { ...prior, ...overrides, task: prior.task, limits: { ...prior.limits, ...next.limits } };
  // Resumed as soft, a hard run's own settings would be refused as meaningless: they go.
  if (next.limits?.budgetMode === 'soft' && merged.limits) {
    const { minReplyTokens: _min, maxReplyTokens: _max, ...limits } = merged.limits;
    const { budgetTimeoutMs: _timeout, ...rest } = merged;
    return { ...rest, limits };
  }
  return merged;
}
