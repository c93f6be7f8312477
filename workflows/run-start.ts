// A run's start, before its loop: the patches asked, the configuration
// resolved (from the input, or from the stopped run it resumes, or from the
// run it forks), the state it starts from, and its ids. Until the loop's
// handlers are set, the status query answers a starting view.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentInput, RunConfig } from '../common/contract.js';
import { inputOfConfig, resumedInput } from '../common/resume-input.js';
import { statusQuery, transcriptQuery } from '../common/run-messages.js';
import { startedFrom, type CarriedState } from './carried-state.js';
import { forkState, startFork, wantsFork, type ForkStart } from './fork-setup.js';
import type { RunIds } from './run-context.js';
import { askPatches, type Patches } from './patches.js';
import { failedAtStart, loadPriorRun, resolveConfig, startingView } from './run-setup.js';
import { stateOf } from './run-state.js';
import { checkDefinition } from './definition-check.js';

export interface RunStart {
  ids: RunIds;
  cfg: RunConfig;
  /** What the run starts from: the previous execution's state, a resumed or forked run's, or nothing (a fresh run). */
  carried: CarriedState | undefined;
  patches: Patches;
}

export async function startRun(input: AgentInput, carried: CarriedState | undefined): Promise<RunStart> {
  const info = wf.workflowInfo();
  // Asked first, before anything awaits: where a patch is asked must not move
  // between the original run and its replay.
  const patches = askPatches();
  // Queries are not buffered like signals: answer them while the
  // configuration is being resolved, before the run replaces these handlers.
  const starting = startingView(info.workflowId, carried);
  wf.setHandler(statusQuery, () => starting);
  wf.setHandler(transcriptQuery, () => carried?.state.messages ?? []);
  // A run that continues a stopped one starts from its transcript and totals.
  let prior: Awaited<ReturnType<typeof loadPriorRun>> | null = null;
  // A fork starts from another run's first turns (./fork-setup).
  let fork: ForkStart | null = null;
  let cfg: RunConfig;
  try {
    fork = !carried && wantsFork(input) ? await startFork(input) : null;
    prior = !carried && !fork && typeof input?.resumeFrom === 'string' ? await loadPriorRun(input.resumeFrom) : null;
    // Resolved once per run and carried from execution to execution: a new
    // default on a new worker never changes a run already under way.
    cfg = carried?.cfg ?? (await resolveConfig(prior ? resumedInput(prior.config ? inputOfConfig(prior.config) : prior.input, input) : (fork?.input ?? input), patches));
    if (fork) cfg = { ...cfg, forkFrom: fork.origin };
    // What the definition of the run it continues was, and what moved (./definition-check).
    const source = carried ? null : (prior?.config ?? fork?.sourceConfig ?? null);
    if (source) cfg = checkDefinition(cfg, source, input, prior ? `resume of ${input.resumeFrom}` : `fork of ${fork?.origin.run ?? 'the source'}`);
  } catch (err) {
    // Bad input or a refused resume fails the run at once: its status says so, like its search attributes.
    if (err instanceof ApplicationFailure) failedAtStart(starting, err);
    throw err;
  }
  const resumed = prior ? startedFrom(cfg, stateOf(prior)) : fork ? startedFrom(cfg, forkState(fork)) : undefined;
  const ids: RunIds = {
    workflowId: info.workflowId,
    // A reset run replays an earlier run's history up to the reset point, yet
    // is a run of its own: its trace chain is named by its own run id (the
    // server keeps the earlier run's firstExecutionRunId for it and for what
    // it continues as new), and carried from execution to execution. Any
    // other run: its first execution's run id.
    chainId: info.runId !== info.originalExecutionRunId ? info.runId : (carried?.chainId ?? info.firstExecutionRunId),
    // Effects are keyed by the first execution's run id, which a reset keeps:
    // a reset run's write finds what an earlier run of the workflow did and
    // says so ("already deleted by run R at T"), never acts or reports it twice.
    effectsChainId: info.firstExecutionRunId,
  };
  return { ids, cfg, carried: carried ?? resumed, patches };
}
