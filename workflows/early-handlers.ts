// What a run answers before it is built (while its start awaits the
// configuration, a resume's source or a fork's): Temporal refuses an update
// that has no handler at the end of a workflow task ("No registered handler
// for update"), and a query with none fails, so a caller that acts the moment
// `start` returns got errors that said nothing about the run. Set first thing
// (before anything awaits); the run replaces each when it
// is built (./agent-run.ts). The updates are refused by their validators,
// which leaves nothing in history: a recorded run replays the same.
import * as wf from '@temporalio/workflow';
import { configQuery, decideUpdate, raiseBudgetUpdate, reconcileUpdate, steerUpdate } from '../common/run-messages.js';
import type { RunConfig } from '../common/contract.js';
import { updateRefused } from './refusals.js';

const STARTING = 'the run is starting (its configuration is being resolved)';

export function setStartingHandlers(carriedCfg: RunConfig | undefined): void {
  const refuse =
    (what: string) =>
    (_request: unknown): void => {
      throw updateRefused(what);
    };
  const never = (_request: unknown): never => {
    throw updateRefused(STARTING);
  };
  wf.setHandler(decideUpdate, never, { validator: refuse(`no call is awaiting a decision: ${STARTING}`) });
  wf.setHandler(reconcileUpdate, never, { validator: refuse(`no write is awaiting reconciliation: ${STARTING}`) });
  wf.setHandler(steerUpdate, never, { validator: refuse(`${STARTING}: send the message again in a moment`) });
  wf.setHandler(raiseBudgetUpdate, never, { validator: refuse(`${STARTING}: raise the budget again in a moment`) });
  wf.setHandler(configQuery, () => {
    if (carriedCfg) return carriedCfg;
    throw new Error(STARTING);
  });
}
