// The one line the Web UI shows for a run in its list: its task, or what it
// resumes or forks when it has none of its own.
import type { AgentInput } from '../common/contract.js';

/** One line for the Web UI's run list: the task, or what the run resumes or forks. */
export function summaryOf(input: AgentInput): string {
  const text = input.task ?? (input.resumeFrom ? `resume ${input.resumeFrom}` : input.forkFrom?.run ? `fork ${input.forkFrom.run} at turn ${input.forkFrom.atTurn}` : 'agent run');
  return text.replace(/\s+/g, ' ').slice(0, 200);
}
