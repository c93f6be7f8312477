// What a resume checks before it starts a run: that the run exists and has
// stopped where a resume can continue it, that a run stopped at a limit
// gets a higher one (the limits count the totals, so the same cap would stop
// the new run at once), and that the stopped run's configuration with the
// options on top is an input the workflow accepts. The workflow checks again
// (activities/load-run.ts, common/input.ts) for runs started without this client.
import type { Client } from '@temporalio/client';
import type { AgentInput, RunResult } from '../common/contract.js';
import { inputOfConfig, RESUMABLE_RULE, resumedInput } from '../common/resume-input.js';
import { isTransientProviderError } from '../common/provider-errors.js';
import { CannotResumeError, InvalidInputError, translating } from './agent-errors.js';
import { checkInput, type OptionNames } from './input-check.js';
import { configOf } from './source-run.js';

/** What a resume sets on top of the stopped run's configuration (undefined: kept; null: lifted). */
export interface ResumeLimits {
  maxTurns?: number | null;
  maxBudgetUsd?: number | null;
  approvalTimeoutMs?: number | null;
}

/** The input a resume starts with: the stopped run's id and what was set (the workflow adds the run's configuration). */
export function resumeInput(from: string, { maxTurns, maxBudgetUsd, approvalTimeoutMs }: ResumeLimits): AgentInput {
  const limits = { ...(maxTurns !== undefined ? { maxTurns } : {}), ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}) };
  // No task: a resumed run's task is the stopped run's (common/resume-input.ts).
  return { resumeFrom: from, ...(Object.keys(limits).length ? { limits } : {}), ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}) } as AgentInput;
}

/**
 * Throws CannotResumeError (the run's state rules it out), InvalidInputError
 * (what was set would stop or break the new run, naming what to change) or
 * RunNotFoundError. Returns notes for the caller to show.
 */
export async function checkResume(c: Client, from: string, set: ResumeLimits, input: AgentInput, names: OptionNames): Promise<string[]> {
  const handle = c.workflow.getHandle(from);
  const status = (await translating(from, undefined, () => handle.describe())).status.name;
  if (status === 'RUNNING') throw new CannotResumeError(`cannot resume: run ${from} is still running: cancel it, or wait for it to stop, before resuming it`, from);
  if (status !== 'COMPLETED') {
    throw new CannotResumeError(`cannot resume: run ${from} ended as ${status.toLowerCase()} (a workflow failure, such as invalid input): there is no transcript to resume`, from);
  }
  const r = (await handle.result()) as RunResult;
  if (r.status === 'completed' || (r.status === 'failed' && !isTransientProviderError(r.errorType))) {
    const why = r.status === 'completed' ? 'the model already answered' : `it failed (${r.error ?? 'no error recorded'}), and retrying cannot help`;
    throw new CannotResumeError(`cannot resume: run ${from} is ${r.status}: ${why}. ${RESUMABLE_RULE}`, from);
  }
  const { maxTurns, maxBudgetUsd: budget } = set;
  if (r.status === 'max_turns_exceeded' && !(maxTurns === null || (maxTurns !== undefined && maxTurns > r.turns))) {
    throw new InvalidInputError(
      maxTurns === undefined
        ? `run ${from} stopped at its turn cap after ${r.turns} turns: give a higher cap, e.g. ${names.set('limits.maxTurns', r.turns * 2)} (or ${names.none})`
        : `${names.set('limits.maxTurns', maxTurns)} does not raise the cap: run ${from} has taken ${r.turns} turns; give more than ${r.turns} (or ${names.none})`,
      'limits.maxTurns',
    );
  }
  if (r.status === 'budget_exceeded' && !(budget === null || (budget !== undefined && budget > r.costUsd))) {
    const spent = `$${r.costUsd.toFixed(6)}`;
    throw new InvalidInputError(
      budget === undefined
        ? `run ${from} stopped at its budget after spending ${spent}: give a higher budget, e.g. ${names.set('limits.maxBudgetUsd', higherBudget(r.costUsd))} (or ${names.none})`
        : `${names.set('limits.maxBudgetUsd', budget)} does not raise the budget: run ${from} has spent ${spent}; give more than that (or ${names.none})`,
      'limits.maxBudgetUsd',
    );
  }
  // The input as the workflow will merge it: lifting the one limit the run still had is refused now, not by the new run.
  const config = await configOf(c, handle);
  if (config) checkInput(resumedInput(inputOfConfig(config), input), (field) => isSet(field, set), `run ${from}'s configuration`, names);
  const i = r.interruption;
  if (i?.type === 'approval') {
    const same = config?.approvalTimeoutMs ? ` (${config.approvalTimeoutMs} ms)` : '';
    const waits =
      set.approvalTimeoutMs === undefined
        ? `with the same approval timeout${same}: pass ${names.set('approvalTimeoutMs', 'MS')} (or ${names.none}) to change it`
        : set.approvalTimeoutMs === null
          ? 'and waits for a decision without a time limit'
          : `and waits up to ${set.approvalTimeoutMs} ms for a decision`;
    return [`run ${from} stopped because nobody decided on ${i.toolName} call ${i.callId} in time; the new run asks again ${waits}`];
  }
  return [];
}

/** Whether the resume set this input field. */
function isSet(field: string, set: ResumeLimits): boolean {
  if (field === 'limits.maxTurns') return set.maxTurns !== undefined;
  if (field === 'limits.maxBudgetUsd') return set.maxBudgetUsd !== undefined;
  if (field === 'approvalTimeoutMs') return set.approvalTimeoutMs !== undefined;
  return false;
}

/** Twice what was spent, in two significant digits: room for as much work again. */
function higherBudget(spent: number): string {
  const n = Number((spent * 2).toPrecision(2));
  return String(n > spent ? n : Number((spent * 2 + 0.01).toPrecision(2)));
}
