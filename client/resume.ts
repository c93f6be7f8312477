// `agent-harness resume RUN`: its flags (checked before anything connects),
// the checks against the stopped run (client/resume-check.ts), then the new run.
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
// parseArgs that takes `--flag -3` as the flag's value, so its own check names it (./parse-flags.ts).
import { parseFlags as parseArgs } from './parse-flags.js';
import type { AgentInput } from '../common/contract.js';
import { limitFlags, numberFlag } from './run-flags.js';
import { checkResume, type ResumeFlags } from './resume-check.js';
import { startRun } from './start-run.js';
import { UsageError } from './usage-error.js';

export interface ResumeArgs {
  /** The workflow id of the stopped run. */
  from: string;
  flags: ResumeFlags;
  /** The new run's workflow id, if given. */
  id: string | undefined;
  detach: boolean;
}

export function resumeArgs(rest: string[]): ResumeArgs {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { 'max-turns': { type: 'string' }, budget: { type: 'string' }, 'approval-timeout-ms': { type: 'string' }, id: { type: 'string' }, detach: { type: 'boolean' } },
  });
  const from = positionals[0];
  if (!from) throw new UsageError('missing <workflowId>');
  const { maxTurns, maxBudgetUsd } = limitFlags(values);
  return {
    from,
    flags: { maxTurns, budget: maxBudgetUsd, approvalTimeoutMs: numberFlag('approval-timeout-ms', values['approval-timeout-ms'], { none: true, integer: true }) },
    id: values.id,
    detach: values.detach ?? false,
  };
}

/** The input a resume starts with: the stopped run's id and the flags given (the workflow adds the run's configuration). */
export function resumeInput(from: string, { maxTurns, budget, approvalTimeoutMs }: ResumeFlags): AgentInput {
  const limits = { ...(maxTurns !== undefined ? { maxTurns } : {}), ...(budget !== undefined ? { maxBudgetUsd: budget } : {}) };
  return { resumeFrom: from, ...(Object.keys(limits).length ? { limits } : {}), ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}) } as AgentInput;
}

/**
 * Refused here, naming why, when the run cannot be continued or the new run
 * would stop at once or be refused (checkResume); then started like `run`.
 */
export async function resume(c: Client, { from, flags, id, detach }: ResumeArgs): Promise<number> {
  const input = resumeInput(from, flags);
  for (const note of await checkResume(c, from, flags, input)) console.error(note);
  return startRun(c, input, id ?? `${from}-resumed-${randomUUID().slice(0, 6)}`, detach, `resume of ${from}`);
}
