// How a run starts (fresh, resumed or forked), decided from its input and its
// source in pure code: ./start.ts only loads the source and resolves the
// configuration (activities, recorded in history) between the steps.
//   sourceOf(input)          what the input asks to start from (checked)
//   resolveStart(input, src) with the source loaded: the input to resolve and
//                            how the run begins once it is resolved (plan.begin)
// Pure and workflow-safe (no I/O, no workflow API): test/unit/start-plan.test.ts
// checks every branch in microseconds.
import { ApplicationFailure } from '@temporalio/common';
import type { LoadedFork, LoadedRun } from '../common/activity-contract.js';
import type { AgentInput, ChatMessage, ForkOrigin, ForkRequest, RunConfig } from '../common/contract.js';
import { definitionChanges, definitionSource, unaskedChanges } from '../common/definition.js';
import { costOfTurns, cutAtTurn } from '../common/fork.js';
import { parseForkFrom } from '../common/fork-input.js';
import { InputError, inputShapeProblem } from '../common/input.js';
import { inputOfConfig, resumedInput } from '../common/resume-input.js';
import { unreadableProblem } from '../common/undecodable.js';
import { firstExecution, type LoopStart } from './carried-state.js';
import { initialState, stateFrom } from './run-state.js';

/** What a run's input asks to start from: nothing, a stopped run to resume, a run or an exported file to fork. */
export type SourceRequest = { kind: 'new' } | { kind: 'resume'; workflowId: string } | { kind: 'fork'; fork: ForkRequest };

/** The source as loaded (activities, in ./start.ts): an exported file needs no loading, its transcript is in the request. */
export type Source =
  | { kind: 'new' }
  | { kind: 'resume'; workflowId: string; loaded: LoadedRun }
  | { kind: 'fork'; fork: ForkRequest; loaded: LoadedFork | null };

/** How the run begins, once the input to resolve (`resolve`) is resolved by the worker's defaults. */
export interface StartPlan {
  kind: Source['kind'];
  /** The input the worker resolves (a local activity): the run's own, or its source's with the run's settings on top. */
  resolve: AgentInput;
  /** The configuration and the loop's first state, from the resolved configuration; throws DefinitionChanged when the worker refuses a moved definition. */
  begin(resolved: RunConfig): { cfg: RunConfig; from: LoopStart };
}

const invalid = (err: InputError): ApplicationFailure =>
  ApplicationFailure.create({ type: 'InvalidInput', message: err.message, nonRetryable: true, details: [{ field: err.field }] });
const forkRefused = (why: string): ApplicationFailure => ApplicationFailure.create({ type: 'ForkRefused', message: `cannot fork: ${why}`, nonRetryable: true });

/**
 * What the input asks to start from, checked before anything is loaded or
 * encoded: an input the worker could not decode, an input no field of which JSON can carry as given (Infinity, a
 * value nested thousands deep: encoding it for an activity would lift a
 * limit or overflow the stack), or a bad `forkFrom`, fails the run as a
 * non-retryable InvalidInput naming the field.
 */
export function sourceOf(input: AgentInput): SourceRequest {
  // A payload the worker could not decode (common/undecodable.ts), or a binary one: never a stand-in for an input.
  const unreadable = unreadableProblem(input, 'start input');
  if (unreadable) throw ApplicationFailure.create({ type: 'InvalidInput', message: unreadable, nonRetryable: true, details: [{ field: 'input' }] });
  const shape = inputShapeProblem(input);
  if (shape) throw invalid(new InputError(shape.field, shape.message));
  let fork: ForkRequest | null;
  try {
    // Not an object at all: the configuration's own check names what is wrong.
    fork = typeof input === 'object' && input !== null ? parseForkFrom(input as unknown as Record<string, unknown>) : null;
  } catch (err) {
    if (err instanceof InputError) throw invalid(err);
    throw err;
  }
  if (fork) return { kind: 'fork', fork };
  if (typeof input?.resumeFrom === 'string') return { kind: 'resume', workflowId: input.resumeFrom };
  return { kind: 'new' };
}

/**
 * The plan of a run's start from its input and its loaded source:
 * - new: the input as given; the state from the resolved task and system prompt.
 * - resumed: the stopped run's configuration (so no worker default changes
 *   what it ran with) with the input's settings on top; its transcript and totals.
 * - forked: the source's configuration (or, from an exported file, the input
 *   itself) with the fork's settings on top; the transcript cut at atTurn. Turns
 *   count from atTurn, so a turn cap counts the inherited turns (as a resume's
 *   does); tool runs, cost and usage are the fork's own: what the source paid
 *   is in forkFrom.inheritedCostUsd.
 * A resumed or forked run's definition is compared with its source's (begin).
 * Throws a non-retryable ResumeRefused / ForkRefused naming why a source cannot be used.
 */
export function resolveStart(input: AgentInput, source: Source): StartPlan {
  if (source.kind === 'new') {
    return { kind: 'new', resolve: input, begin: (cfg) => ({ cfg, from: firstExecution(initialState(cfg)) }) };
  }
  if (source.kind === 'resume') {
    const prior = source.loaded;
    if (!prior.ok) throw ApplicationFailure.create({ type: 'ResumeRefused', message: `cannot resume: ${prior.reason}`, nonRetryable: true });
    const r = prior.result;
    const state = stateFrom(prior.messages, { turns: r.turns, toolRuns: r.toolRuns, costUsd: r.costUsd, usage: r.usage, promptTokensPerTurn: r.promptTokensPerTurn, usageEstimatedTurns: r.usageEstimatedTurns, children: r.children });
    return {
      kind: 'resume',
      resolve: resumedInput(prior.config ? inputOfConfig(prior.config) : prior.input, input),
      begin: (cfg) => ({ cfg: checkDefinition(cfg, prior.config, input, `resume of ${source.workflowId}`), from: firstExecution(state) }),
    };
  }
  const { fork: req } = source;
  // The fork's settings: everything but forkFrom (its transcript would be recorded twice).
  const { forkFrom: _f, ...overrides } = input;
  const origin = (inheritedCostUsd: number | null, runId: string | null): ForkOrigin => ({
    run: req.run ?? null,
    workflowId: req.run ?? null,
    runId,
    atTurn: req.atTurn,
    message: req.message ?? null,
    inheritedCostUsd,
    fromFile: req.transcript !== undefined,
  });
  let resolve: AgentInput;
  let cut: ForkCut;
  if (req.transcript) {
    const c = cutAtTurn(req.transcript, req.atTurn);
    if (!c.ok) throw forkRefused(`the transcript: ${c.reason}`);
    // The file's configuration travels as the input itself (the CLI writes it there); its task is the transcript's.
    resolve = { ...overrides, task: overrides.task ?? req.transcript.find((m) => m.role === 'user')?.content ?? '' };
    cut = { messages: c.messages, origin: origin(req.turnCostsUsd ? costOfTurns(req.turnCostsUsd, req.atTurn) : null, null), sourceConfig: undefined };
  } else {
    const loaded = source.loaded;
    if (!loaded) throw forkRefused(`run ${req.run ?? '(none named)'} was not loaded`);
    if (!loaded.ok) throw forkRefused(loaded.reason);
    // The source's whole configuration, so no worker default changes what it ran with; the fork's settings on top.
    const { resumeFrom: _r, forkFrom: _s, ...from } = loaded.config ? inputOfConfig(loaded.config) : loaded.input;
    resolve = resumedInput(from, { ...overrides, task: from.task });
    cut = { messages: loaded.messages, origin: origin(loaded.inheritedCostUsd, loaded.runId), sourceConfig: loaded.config };
  }
  const messages = [...cut.messages];
  if (cut.origin.message !== null) messages.push({ role: 'user', content: cut.origin.message });
  // No decision is carried (firstExecution): every call of the cut already has its result.
  const state = stateFrom(messages, { turns: cut.origin.atTurn });
  return {
    kind: 'fork',
    resolve,
    begin: (resolved) => ({ cfg: checkDefinition({ ...resolved, forkFrom: cut.origin }, cut.sourceConfig, input, `fork of ${cut.origin.run ?? 'the source'}`), from: firstExecution(state) }),
  };
}

interface ForkCut {
  messages: ChatMessage[];
  origin: ForkOrigin;
  /** The source's resolved configuration (absent for an exported file, or a source that does not answer the config query). */
  sourceConfig: RunConfig | undefined;
}

/**
 * A resumed or forked run's definition against its source's, recorded in the
 * configuration (carried through continue-as-new) and refused, when the
 * worker says so, if it moved under the run (a change the run's own input
 * did not ask for). Without a source configuration there is nothing to compare.
 */
function checkDefinition(cfg: RunConfig, source: RunConfig | undefined, input: AgentInput, what: string): RunConfig {
  if (!source) return cfg;
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
