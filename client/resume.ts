// `agent-harness resume RUN`: its flags (checked before anything connects),
// then AgentClient.resume (the checks against the stopped run, the new run).
// parseArgs that takes `--flag -3` as the flag's value, so its own check names it (./parse-flags.ts).
import { parseFlags as parseArgs } from './parse-flags.js';
import type { AgentClient } from './agent-client.js';
import type { ResumeLimits } from './resume-check.js';
import { limitFlags, numberFlag } from './run-flags.js';
import { startRun } from './start-run.js';
import { UsageError } from './usage-error.js';

export interface ResumeArgs {
  /** The workflow id of the stopped run. */
  from: string;
  flags: ResumeLimits;
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
    flags: { maxTurns, maxBudgetUsd, approvalTimeoutMs: numberFlag('approval-timeout-ms', values['approval-timeout-ms'], { none: true, integer: true }) },
    id: values.id,
    detach: values.detach ?? false,
  };
}

/**
 * Refused by AgentClient, naming why, when the run cannot be continued or
 * the new run would stop at once or be refused; then followed like `run`.
 */
export async function resume(agent: AgentClient, { from, flags, id, detach }: ResumeArgs): Promise<number> {
  const { maxTurns, maxBudgetUsd, approvalTimeoutMs } = flags;
  const limits = { ...(maxTurns !== undefined ? { maxTurns } : {}), ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}) };
  const start = () =>
    agent.resume(from, { ...(Object.keys(limits).length ? { limits } : {}), ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}), ...(id !== undefined ? { workflowId: id } : {}) });
  return startRun(agent, start, detach, `resume of ${from}`);
}
