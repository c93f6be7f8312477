// Forks and exports: a fork is a new run from the first N turns of a run or
// of an export (common/fork.ts), an export a run's turns and configuration
// as JSON (enough to fork from once the source's history is gone). The
// input a fork starts with, and the checks the workflow would make of it
// (workflows/start.ts), made here first so a fork that cannot start is
// refused naming what to change, before any run starts.
import { QueryNotRegisteredError, type Client } from '@temporalio/client';
import { cutAtTurn, EXPORT_FORMAT, EXPORT_VERSION } from '../common/fork.js';
import { parseForkFrom } from '../common/fork-input.js';
import { InputError } from '../common/input-error.js';
import { inputOfConfig, resumedInput } from '../common/resume-input.js';
import { turnCostsOf } from '../activities/turn-costs.js';
import type { AgentInput, ChatMessage, RunConfig, RunStatusView } from '../common/contract.js';
import { AgentClientError, InvalidInputError, translating } from './agent-errors.js';
import { checkInput, type OptionNames } from './input-check.js';
import { configOf, transcriptOf } from './source-run.js';

/** What an export holds: enough to fork from without the source (its history may be gone by then). */
export interface RunExport {
  /** Always `agent-harness/run-export`: what `fork --from-file` checks first. */
  format: typeof EXPORT_FORMAT;
  /** The export format's version (1). */
  version: typeof EXPORT_VERSION;
  /** The source run's workflow id. */
  workflowId: string;
  /** The execution read. */
  runId: string;
  /** ISO 8601. */
  exportedAt: string;
  /** Its status query's answer when exported. */
  status: RunStatusView;
  /** Its configuration as the run resolved it at its start (defaults filled in, tool specs). */
  config: RunConfig;
  /** The source's turns when exported. */
  turns: number;
  /** Turn k's cost at index k - 1, where the source's history holds it (null where it does not). */
  turnCostsUsd: (number | null)[];
  /** Its transcript. */
  messages: ChatMessage[];
}

/** What a fork keeps of its source and sets on top of it. */
export interface ForkSpec {
  /** Turns of the source to keep (0: none); the fork's first model call is turn atTurn + 1. */
  atTurn: number;
  /** One execution of the source (a run reset away, say); default: the workflow id's current one. Not with an export. */
  runId?: string;
  /** A user message added after turn atTurn. */
  message?: string;
  /** Another model for the fork. */
  model?: string;
  /** Limits on top of the source's (null lifts one; at least one must stay). The turn cap counts the kept turns. */
  limits?: { maxTurns?: number | null; maxBudgetUsd?: number | null };
}

/** An export without the means to fork from it: its run predates the config query, or failed before its loop. */
export class CannotExportError extends AgentClientError {}

/** The source's workflow id: the run's, or the one the export was taken from. */
export const sourceIdOf = (source: string | RunExport): string => (typeof source === 'string' ? source : source.workflowId);

/**
 * The input a fork starts with. From a run: only what the fork sets (the
 * workflow loads the source's configuration). From an export: the export's
 * configuration with what the fork sets on top, and its transcript.
 */
export function forkInput(source: string | RunExport, spec: ForkSpec): AgentInput {
  const limits = spec.limits ?? {};
  const overrides = overridesOf(spec);
  const message = spec.message !== undefined ? { message: spec.message } : {};
  if (typeof source === 'string') {
    return { ...overrides, forkFrom: { run: source, atTurn: spec.atTurn, ...(spec.runId ? { runId: spec.runId } : {}), ...message } } as AgentInput;
  }
  const { resumeFrom: _r, ...from } = inputOfConfig(source.config);
  const turnCostsUsd = source.turnCostsUsd.every((c): c is number => typeof c === 'number') ? { turnCostsUsd: source.turnCostsUsd } : {};
  return {
    ...from,
    ...overrides,
    limits: { ...from.limits, ...limits },
    forkFrom: { run: source.workflowId, atTurn: spec.atTurn, transcript: source.messages, ...turnCostsUsd, ...message },
  };
}

/** The input fields a fork sets over its source's: its model and limits, where given. */
function overridesOf(spec: ForkSpec): Partial<AgentInput> {
  const limits = spec.limits ?? {};
  return { ...(spec.model !== undefined ? { model: spec.model } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}

/** Whether the fork set this input field. */
function isSet(field: string, spec: ForkSpec): boolean {
  if (field === 'model') return spec.model !== undefined;
  if (field === 'limits.maxTurns') return spec.limits?.maxTurns !== undefined;
  if (field === 'limits.maxBudgetUsd') return spec.limits?.maxBudgetUsd !== undefined;
  return false;
}

/**
 * The checks that need no server: from an export, a cut past its end and an
 * input the workflow would refuse (`exportName`: how to name the export in
 * the refusal); for either source, the fork request itself. Throws
 * InvalidInputError.
 */
export function checkForkInput(source: string | RunExport, spec: ForkSpec, input: AgentInput, names: OptionNames, exportName?: string): void {
  if (typeof source !== 'string') {
    if (spec.runId !== undefined) throw new InvalidInputError(`${names.name('runId')} names an execution of a run; an export is one already`, 'runId');
    // The workflow cuts the export's transcript itself; cut here first: a turn past its end is refused by name.
    const cut = cutAtTurn(source.messages, spec.atTurn);
    if (!cut.ok) throw new InvalidInputError(`${names.name('atTurn')} ${spec.atTurn}: ${cut.reason}`, 'atTurn');
    checkInput(input, (field) => isSet(field, spec), exportName ?? `the export of ${source.workflowId}`, names);
  }
  try {
    parseForkFrom(input as unknown as Record<string, unknown>);
  } catch (err) {
    if (err instanceof InputError) throw new InvalidInputError(err.message, err.field);
    throw err;
  }
}

/**
 * What the workflow would check of a fork from a run, asked of the source:
 * that it exists (RunNotFoundError), that it has atTurn finished turns, and
 * that its configuration with the fork's settings on top is an input the
 * workflow accepts. A source that does not answer (no worker up) is left to
 * the workflow's own check.
 */
export async function checkFork(c: Client, from: string, spec: ForkSpec, names: OptionNames): Promise<void> {
  const handle = c.workflow.getHandle(from, spec.runId);
  await translating(from, spec.runId, () => handle.describe());
  const messages = await transcriptOf(c, handle);
  if (messages) {
    const cut = cutAtTurn(messages, spec.atTurn);
    if (!cut.ok) throw new InvalidInputError(`${names.name('atTurn')} ${spec.atTurn}: ${cut.reason}`, 'atTurn');
  }
  const config = await configOf(c, handle);
  if (config) {
    const { resumeFrom: _r, ...source } = inputOfConfig(config);
    checkInput(resumedInput(source, { ...overridesOf(spec), task: source.task }), (field) => isSet(field, spec), `run ${from}'s configuration`, names);
  }
}

/** A run's export: its status, configuration, messages and cost per turn (the execution `runId`, or the current one). */
export async function exportOf(
  c: Client,
  workflowId: string,
  runId: string | undefined,
  ask: { status(): Promise<RunStatusView>; transcript(): Promise<ChatMessage[]>; config(): Promise<RunConfig> },
): Promise<RunExport> {
  const described = await translating(workflowId, runId, () => c.workflow.getHandle(workflowId, runId).describe());
  const config = await ask.config().catch((err: unknown) => {
    if (err instanceof QueryNotRegisteredError) throw new CannotExportError(`run ${workflowId} has no configuration to export (it predates the config query, or failed before its loop)`);
    throw err;
  });
  const messages = await ask.transcript();
  const costs = await turnCostsOf(c, workflowId, described.runId, config.pricing);
  const turns = messages.filter((m) => m.role === 'assistant').length;
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    workflowId,
    runId: described.runId,
    exportedAt: new Date().toISOString(),
    status: await ask.status(),
    config,
    turns,
    turnCostsUsd: Array.from({ length: turns }, (_, i) => costs[i] ?? null),
    messages,
  };
}
