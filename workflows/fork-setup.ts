// How a fork starts (`forkFrom`, common/fork.ts): the source is read and cut in
// an activity (or, from an exported file, cut here), the source's
// configuration with the fork's own settings on top is resolved like any
// input, and the loop starts at turn atTurn + 1 with the cut transcript. No
// tool and no model call of the inherited turns is made again.
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentActivities as Activities } from '../common/activity-contract.js';
import type { AgentInput, ChatMessage, RunConfig } from '../common/contract.js';
import { costOfTurns, cutAtTurn } from '../common/fork.js';
import type { ForkOrigin, ForkRequest } from '../common/contract.js';
import { inputOfConfig, resumedInput } from '../common/resume-input.js';
import { InputError } from '../common/input-error.js';
import { parseForkFrom } from '../common/fork-input.js';
import { noChildren, type RunState } from './run-state.js';

const forkActivity = wf.proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 3 } });

export interface ForkStart {
  /** The input to resolve: the source's, with the fork's settings on top; no forkFrom (its transcript would be recorded twice). */
  input: AgentInput;
  messages: ChatMessage[];
  origin: ForkOrigin;
  /** The source's resolved configuration (absent for an exported file, or a source recorded before configurations): what the fork's definition is compared with. */
  sourceConfig?: RunConfig;
}

/** True for an input that asks for a fork (checked fully by startFork). */
export const wantsFork = (input: AgentInput | undefined): boolean => input?.forkFrom !== undefined && input.forkFrom !== null;

/** Loads and cuts the source; a non-retryable failure naming why when it cannot be forked. */
export async function startFork(input: AgentInput): Promise<ForkStart> {
  let req: ForkRequest | null;
  try {
    req = parseForkFrom(input as unknown as Record<string, unknown>);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    throw ApplicationFailure.create({ type: 'InvalidInput', message: err.message, nonRetryable: true, details: [{ field: err.field }] });
  }
  if (!req) throw ApplicationFailure.create({ type: 'InvalidInput', message: 'invalid input: forkFrom is missing', nonRetryable: true });
  const { forkFrom: _f, ...overrides } = input;
  const origin = (inheritedCostUsd: number | null, runId: string | null): ForkOrigin => ({
    run: req.run ?? null,
    runId,
    atTurn: req.atTurn,
    message: req.message ?? null,
    inheritedCostUsd,
    fromFile: req.transcript !== undefined,
  });
  if (req.transcript) {
    const cut = cutAtTurn(req.transcript, req.atTurn);
    if (!cut.ok) throw refused(`the transcript: ${cut.reason}`);
    // The file's configuration travels as the input itself (the CLI writes it there); its task is the transcript's.
    const task = overrides.task ?? req.transcript.find((m) => m.role === 'user')?.content ?? '';
    return { input: { ...overrides, task }, messages: cut.messages, origin: origin(req.turnCostsUsd ? costOfTurns(req.turnCostsUsd, req.atTurn) : null, null) };
  }
  const loaded = await forkActivity.loadForkSource({ run: req.run as string, ...(req.runId ? { runId: req.runId } : {}), atTurn: req.atTurn });
  if (!loaded.ok) throw refused(loaded.reason);
  // The source's whole configuration, so no worker default changes what it ran with; the fork's settings on top.
  const { resumeFrom: _r, forkFrom: _s, ...source } = loaded.config ? inputOfConfig(loaded.config) : loaded.input;
  return {
    input: resumedInput(source, { ...overrides, task: source.task }),
    messages: loaded.messages,
    origin: origin(loaded.inheritedCostUsd, loaded.runId),
    ...(loaded.config ? { sourceConfig: loaded.config } : {}),
  };
}

const refused = (why: string) => ApplicationFailure.create({ type: 'ForkRefused', message: `cannot fork: ${why}`, nonRetryable: true });

/**
 * The fork's first state. Turns count from atTurn, so a turn cap counts the
 * inherited turns (as a resume's does); tool runs, cost and usage are the
 * fork's own: what the source paid is in forkFrom.inheritedCostUsd. No
 * decision is carried (startedFrom): every call of the cut already has its result.
 */
export function forkState(fork: ForkStart): RunState {
  const messages = [...fork.messages];
  if (fork.origin.message !== null) messages.push({ role: 'user', content: fork.origin.message });
  const calls = messages.map((m) => (m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0));
  const lastCalls = [...calls].reverse().find((n) => n > 0) ?? 0;
  const callsProposed = calls.reduce((a, b) => a + b, 0);
  return {
    messages,
    turns: fork.origin.atTurn,
    toolRuns: 0,
    costUsd: 0,
    usage: { promptTokens: 0, completionTokens: 0 },
    promptTokensPerTurn: [],
    usageEstimatedTurns: 0,
    cache: {},
    children: noChildren(),
    callsProposed,
    lastReplyFirstCall: callsProposed - lastCalls + 1,
  };
}
