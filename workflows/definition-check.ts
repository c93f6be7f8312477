// A resumed or forked run's definition against its source's: recorded in the
// configuration (carried through continue-as-new) and refused, when the
// worker says so, if it moved under the run. Computed here from what history
// already holds (the resolved configuration and the source's, both activity
// results), so it adds no command: a history recorded before it replays the
// same, and its configuration has no definitionChange, so it is never refused.
import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentInput, RunConfig } from '../common/contract.js';
import { definitionChanges, definitionSource, unaskedChanges } from '../common/definition.js';

export function checkDefinition(cfg: RunConfig, source: RunConfig, input: AgentInput, what: string): RunConfig {
  const from = definitionSource(source);
  const changed = definitionChanges(from, cfg);
  const unasked = unaskedChanges(changed, input);
  if (unasked.length && cfg.definitionChange === 'refuse' && input.acknowledgeDefinitionChange !== true) {
    throw ApplicationFailure.create({
      type: 'DefinitionChanged',
      message:
        `the ${what} would run on another definition than its source's: ${unasked.join(', ')} changed since it ran (not set by this input); ` +
        'start it with "acknowledgeDefinitionChange": true to continue anyway, or set AGENT_DEFINITION_CHANGE=allow on the worker',
      nonRetryable: true,
      details: [{ definitionChanged: changed }],
    });
  }
  return { ...cfg, definitionFrom: { hash: from.hash, changed } };
}
