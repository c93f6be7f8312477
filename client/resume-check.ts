// What `resume` checks before it starts a run: that the run exists and has
// stopped where a resume can continue it, that a run stopped at a limit
// gets a higher one (the limits count the totals, so the same cap would stop
// the new run at once), and that the stopped run's configuration with the
// flags on top is an input the workflow accepts. The workflow checks again
// (activities/load-run.ts, common/input.ts) for runs started without this CLI.
import type { Client } from '@temporalio/client';
import type { AgentInput, RunResult } from '../common/contract.js';
import { inputOfConfig, RESUMABLE_RULE, resumedInput } from '../common/resume-input.js';
import { isTransientProviderError } from '../common/provider-errors.js';
import { checkInput } from './run-flags.js';
import { configOf } from './source-run.js';
import { Refusal, UsageError } from './usage-error.js';

export interface ResumeFlags {
  maxTurns?: number | null;
  budget?: number | null;
  approvalTimeoutMs?: number | null;
}

/**
 * Throws a Refusal (exit 1) or a UsageError (exit 2) naming what to change;
 * WorkflowNotFoundError for no such run. Returns notes to print first.
 */
export async function checkResume(c: Client, from: string, flags: ResumeFlags, input: AgentInput): Promise<string[]> {
  const handle = c.workflow.getHandle(from);
  const status = (await handle.describe()).status.name;
  if (status === 'RUNNING') throw new Refusal(`cannot resume: run ${from} is still running: cancel it, or wait for it to stop, before resuming it`);
  if (status !== 'COMPLETED') {
    throw new Refusal(`cannot resume: run ${from} ended as ${status.toLowerCase()} (a workflow failure, such as invalid input): there is no transcript to resume`);
  }
  const r = (await handle.result()) as RunResult;
  if (r.status === 'completed' || (r.status === 'failed' && !isTransientProviderError(r.errorType))) {
    const why = r.status === 'completed' ? 'the model already answered' : `it failed (${r.error ?? 'no error recorded'}), and retrying cannot help`;
    throw new Refusal(`cannot resume: run ${from} is ${r.status}: ${why}. ${RESUMABLE_RULE}`);
  }
  if (r.status === 'max_turns_exceeded' && !(flags.maxTurns === null || (flags.maxTurns !== undefined && flags.maxTurns > r.turns))) {
    throw new UsageError(
      flags.maxTurns === undefined
        ? `run ${from} stopped at its turn cap after ${r.turns} turns: give a higher cap, e.g. --max-turns ${r.turns * 2} (or none)`
        : `--max-turns ${flags.maxTurns} does not raise the cap: run ${from} has taken ${r.turns} turns; give more than ${r.turns} (or none)`,
    );
  }
  if (r.status === 'budget_exceeded' && !(flags.budget === null || (flags.budget !== undefined && flags.budget > r.costUsd))) {
    const spent = `$${r.costUsd.toFixed(6)}`;
    throw new UsageError(
      flags.budget === undefined
        ? `run ${from} stopped at its budget after spending ${spent}: give a higher budget, e.g. --budget ${higherBudget(r.costUsd)} (or none)`
        : `--budget ${flags.budget} does not raise the budget: run ${from} has spent ${spent}; give more than that (or none)`,
    );
  }
  // The input as the workflow will merge it: a flag that lifts the one limit the run still had is refused now, not by the new run.
  const config = await configOf(c, handle);
  if (config) checkInput(resumedInput(inputOfConfig(config), input), (field) => flagOfField(field, flags), `run ${from}'s configuration`);
  const i = r.interruption;
  if (i?.type === 'approval') {
    const same = config?.approvalTimeoutMs ? ` (${config.approvalTimeoutMs} ms)` : '';
    const waits =
      flags.approvalTimeoutMs === undefined
        ? `with the same approval timeout${same}: pass --approval-timeout-ms MS (or none) to change it`
        : flags.approvalTimeoutMs === null
          ? 'and waits for a decision without a time limit'
          : `and waits up to ${flags.approvalTimeoutMs} ms for a decision`;
    return [`run ${from} stopped because nobody decided on ${i.toolName} call ${i.callId} in time; the new run asks again ${waits}`];
  }
  return [];
}

/** The resume flag that set an input field, if it was given. */
function flagOfField(field: string, flags: ResumeFlags): string | null {
  if (field === 'limits.maxTurns' && flags.maxTurns !== undefined) return '--max-turns';
  if (field === 'limits.maxBudgetUsd' && flags.budget !== undefined) return '--budget';
  if (field === 'approvalTimeoutMs' && flags.approvalTimeoutMs !== undefined) return '--approval-timeout-ms';
  return null;
}

/** Twice what was spent, in two significant digits: room for as much work again. */
function higherBudget(spent: number): string {
  const n = Number((spent * 2).toPrecision(2));
  return String(n > spent ? n : Number((spent * 2 + 0.01).toPrecision(2)));
}
