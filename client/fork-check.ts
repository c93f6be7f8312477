// What `fork RUN --at-turn N` checks before it starts a run, as the workflow
// would (workflows/fork-setup.ts): that the source has N finished turns, and
// that its configuration with the fork's flags on top is an input the
// workflow accepts. A source that does not answer (no worker up) is left to
// the workflow's own check. A fork from a file is checked in forkArgs.
import type { Client } from '@temporalio/client';
import { cutAtTurn } from '../common/fork.js';
import { inputOfConfig, resumedInput } from '../common/resume-input.js';
import type { ForkArgs } from './fork-export.js';
import { forkFlagOf } from './fork-export.js';
import { checkInput } from './run-flags.js';
import { configOf, transcriptOf } from './source-run.js';
import { UsageError } from './usage-error.js';

export async function checkFork(c: Client, f: ForkArgs): Promise<void> {
  const req = f.input.forkFrom;
  if (!req || req.transcript !== undefined) return;
  const handle = c.workflow.getHandle(f.from, req.runId);
  // No such run: WorkflowNotFoundError (exit 6), as for any command naming one.
  await handle.describe();
  const messages = await transcriptOf(c, handle);
  if (messages) {
    const cut = cutAtTurn(messages, req.atTurn);
    if (!cut.ok) throw new UsageError(`--at-turn ${req.atTurn}: ${cut.reason}`);
  }
  const config = await configOf(c, handle);
  if (config) {
    const { resumeFrom: _r, ...source } = inputOfConfig(config);
    checkInput(resumedInput(source, { ...f.overrides, task: source.task }), (field) => forkFlagOf(field, f.overrides), `run ${f.from}'s configuration`);
  }
}
