// A run's start (new, resumed, forked) planned from its input and its source,
// without Temporal: workflows/start-plan.ts is pure, so every branch is
// checked here in microseconds; test/resume.test.ts and test/fork.test.ts run
// the same starts on a real worker.
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { AgentInput, ChatMessage, RunConfig, RunResult, ToolCall } from '../../common/contract.js';
import { parseBuiltin } from '../helpers/builtin-specs.js';
import { inputOfConfig } from '../../common/resume-input.js';
import { undecodableMarker } from '../../common/undecodable.js';
import { completedExit, runResult } from '../../workflows/exits.js';
import { initialState } from '../../workflows/run-state.js';
import { resolveStart, sourceOf, type Source } from '../../workflows/start-plan.js';

const call = (id: string): ToolCall => ({ id, type: 'function', function: { name: 'list_files', arguments: '{}' } });
const transcript: ChatMessage[] = [
  { role: 'user', content: 'the task' },
  { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
  { role: 'tool', tool_call_id: 'a', name: 'list_files', content: 'x' },
  { role: 'tool', tool_call_id: 'b', name: 'list_files', content: 'y' },
  { role: 'assistant', content: null, tool_calls: [call('c')] },
  { role: 'tool', tool_call_id: 'c', name: 'list_files', content: 'z' },
  { role: 'assistant', content: 'done' },
];

/** The failure `fn` throws, for its type, message and details. */
function failure(fn: () => unknown): ApplicationFailure {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApplicationFailure) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

const cfgOf = (input: AgentInput, extra: Partial<RunConfig> = {}): RunConfig => ({ ...parseBuiltin(input), ...extra });
const stoppedResult = (cfg: RunConfig): RunResult => ({
  ...runResult('src', completedExit('the model answered', 'done'), { ...initialState(cfg), turns: 3, toolRuns: 3, costUsd: 0.01, usage: { promptTokens: 300, completionTokens: 30 }, promptTokensPerTurn: [90, 100, 110] }),
});

describe('sourceOf: what an input asks to start from', () => {
  it('is new, a resume or a fork', () => {
    expect(sourceOf({ task: 't' })).toEqual({ kind: 'new' });
    expect(sourceOf({ task: 't', resumeFrom: 'run-1' })).toEqual({ kind: 'resume', workflowId: 'run-1' });
    expect(sourceOf({ forkFrom: { run: 'run-1', atTurn: 2 } } as unknown as AgentInput)).toEqual({ kind: 'fork', fork: { run: 'run-1', atTurn: 2 } });
  });

  it('refuses a bad forkFrom, a fork that also resumes, and a value JSON cannot carry, naming the field', () => {
    const both = failure(() => sourceOf({ task: 't', resumeFrom: 'r', forkFrom: { run: 'x', atTurn: 1 } }));
    expect(both).toMatchObject({ type: 'InvalidInput', nonRetryable: true, details: [{ field: 'forkFrom' }] });
    expect(failure(() => sourceOf({ forkFrom: { run: 'x', atTurn: -1 } } as unknown as AgentInput))).toMatchObject({ type: 'InvalidInput', details: [{ field: 'forkFrom.atTurn' }] });
    const infinite = failure(() => sourceOf({ task: 't', limits: { maxTurns: Infinity } }));
    expect(infinite).toMatchObject({ type: 'InvalidInput', details: [{ field: 'limits.maxTurns' }] });
    expect(infinite.message).toMatch(/finite number/);
  });

  it('refuses a payload the worker could not decode, or a binary one, as the input it stands for', () => {
    const marker = failure(() => sourceOf(undecodableMarker('no key k2') as unknown as AgentInput));
    expect(marker).toMatchObject({ type: 'InvalidInput', nonRetryable: true, message: 'the start input could not be decoded: no key k2', details: [{ field: 'input' }] });
    expect(failure(() => sourceOf(new Uint8Array(3) as unknown as AgentInput)).message).toBe('the start input is 3 bytes of binary data; it must be a JSON object');
  });

  it('leaves an input that is not an object to the configuration, which names it', () => {
    expect(sourceOf(null as unknown as AgentInput)).toEqual({ kind: 'new' });
  });
});

describe('resolveStart: a new run', () => {
  it('resolves its own input and starts from its task and system prompt, first execution', () => {
    const input: AgentInput = { task: 'the task', system: 'be brief' };
    const plan = resolveStart(input, { kind: 'new' });
    expect(plan.resolve).toBe(input);
    const cfg = cfgOf(input);
    const { cfg: begun, from } = plan.begin(cfg);
    expect(begun).toBe(cfg);
    expect(from).toEqual({ state: initialState(cfg), decisions: {}, seq: 0, executions: 0, steers: [], usedSteerSignatures: {} });
  });
});

describe('resolveStart: a resume', () => {
  const srcInput: AgentInput = { task: 'the task', model: 'plan', limits: { maxTurns: 3 } };
  const srcCfg = cfgOf(srcInput, { definitionChange: 'refuse' });
  const loaded = (config: RunConfig | undefined): Source => ({ kind: 'resume', workflowId: 'src', loaded: { ok: true, input: srcInput, ...(config ? { config } : {}), result: stoppedResult(srcCfg), messages: transcript } });

  it('fails as ResumeRefused, naming why, when the source cannot be resumed', () => {
    const err = failure(() => resolveStart({ task: '', resumeFrom: 'src' }, { kind: 'resume', workflowId: 'src', loaded: { ok: false, reason: 'run src is still running' } }));
    expect(err).toMatchObject({ type: 'ResumeRefused', nonRetryable: true, message: 'cannot resume: run src is still running' });
  });

  it('resolves the source configuration with the input on top, and starts from its transcript and totals', () => {
    const input: AgentInput = { task: 'ignored', resumeFrom: 'src', limits: { maxTurns: 9 } };
    const plan = resolveStart(input, loaded(srcCfg));
    expect(plan.resolve).toMatchObject({ ...inputOfConfig(srcCfg), task: 'the task', resumeFrom: 'src', limits: { maxTurns: 9 } });
    const { cfg, from } = plan.begin(cfgOf(plan.resolve, { definitionChange: 'refuse' }));
    // The limits moved, but the input asked for that: recorded, not refused.
    expect(cfg.definitionFrom?.changed).toEqual(['limits']);
    expect(from).toMatchObject({ seq: 0, executions: 0, decisions: {}, steers: [] });
    expect(from.state).toMatchObject({ messages: transcript, turns: 3, toolRuns: 3, costUsd: 0.01, promptTokensPerTurn: [90, 100, 110], callsProposed: 3, lastReplyFirstCall: 3, messagesAtLastCall: 0, budgetRaises: [], usageOverReservation: null });
  });

  it('refuses a definition that moved under it (not asked by the input) when the worker says so', () => {
    const plan = resolveStart({ task: '', resumeFrom: 'src' }, loaded(srcCfg));
    const moved = cfgOf({ ...plan.resolve, system: 'another default prompt' }, { definitionChange: 'refuse' });
    expect(failure(() => plan.begin(moved))).toMatchObject({ type: 'DefinitionChanged', nonRetryable: true, details: [{ definitionChanged: ['system'] }] });
    expect(plan.begin({ ...moved, definitionChange: 'allow' }).cfg.definitionFrom?.changed).toEqual(['system']);
    // Acknowledged by the input: taken.
    const acknowledged = resolveStart({ task: '', resumeFrom: 'src', acknowledgeDefinitionChange: true }, loaded(srcCfg));
    expect(acknowledged.begin(moved).cfg.definitionFrom?.changed).toEqual(['system']);
  });

  it('resolves the source input when the source has no recorded configuration, and compares nothing', () => {
    const plan = resolveStart({ task: '', resumeFrom: 'src' }, loaded(undefined));
    expect(plan.resolve).toMatchObject({ task: 'the task', model: 'plan', limits: { maxTurns: 3 } });
    expect(plan.begin(cfgOf(plan.resolve)).cfg.definitionFrom).toBeUndefined();
  });
});

describe('resolveStart: a fork', () => {
  it('from an exported file: the transcript cut at atTurn, its task, its inherited cost, the message after the cut', () => {
    const input = { model: 'plan', forkFrom: { run: 'src', atTurn: 1, message: 'now the other way', transcript, turnCostsUsd: [0.001, 0.002, 0.003] } } as unknown as AgentInput;
    const source: Source = { kind: 'fork', fork: { run: 'src', atTurn: 1, message: 'now the other way', transcript, turnCostsUsd: [0.001, 0.002, 0.003] }, loaded: null };
    const plan = resolveStart(input, source);
    expect(plan.resolve).toEqual({ model: 'plan', task: 'the task' });
    const { cfg, from } = plan.begin(cfgOf(plan.resolve));
    expect(cfg.forkFrom).toEqual({ run: 'src', workflowId: 'src', runId: null, atTurn: 1, message: 'now the other way', inheritedCostUsd: 0.001, fromFile: true });
    expect(from.state.messages).toEqual([...transcript.slice(0, 4), { role: 'user', content: 'now the other way' }]);
    expect(from.state).toMatchObject({ turns: 1, toolRuns: 0, costUsd: 0, callsProposed: 2, lastReplyFirstCall: 1 });
    expect(from.decisions).toEqual({});
  });

  it('refuses a cut past the end or through an unfinished turn, naming why', () => {
    const err = failure(() => resolveStart({ task: 't' }, { kind: 'fork', fork: { atTurn: 5, transcript }, loaded: null }));
    expect(err).toMatchObject({ type: 'ForkRefused', nonRetryable: true, message: 'cannot fork: the transcript: the source has 3 turns, so atTurn 5 is past its end' });
    const loadErr = failure(() => resolveStart({ task: 't' }, { kind: 'fork', fork: { run: 'src', atTurn: 1 }, loaded: { ok: false, reason: 'run src not found' } }));
    expect(loadErr).toMatchObject({ type: 'ForkRefused', message: 'cannot fork: run src not found' });
  });

  it('from a run: its configuration with the fork’s settings on top, compared with the source’s', () => {
    const srcCfg = cfgOf({ task: 'the task', model: 'plan', limits: { maxTurns: 3 } }, { definitionChange: 'refuse' });
    const input = { forkFrom: { run: 'src', atTurn: 2 }, limits: { maxTurns: 8 } } as unknown as AgentInput;
    const plan = resolveStart(input, {
      kind: 'fork',
      fork: { run: 'src', atTurn: 2 },
      loaded: { ok: true, messages: transcript.slice(0, 6), input: { task: 'the task' }, config: srcCfg, runId: 'r-1', temporalStatus: 'completed', sourceTurns: 3, inheritedCostUsd: 0.004 },
    });
    expect(plan.resolve).toMatchObject({ task: 'the task', model: 'plan', limits: { maxTurns: 8 } });
    expect(plan.resolve.forkFrom).toBeUndefined();
    const { cfg, from } = plan.begin(cfgOf(plan.resolve, { definitionChange: 'refuse' }));
    expect(cfg.forkFrom).toEqual({ run: 'src', workflowId: 'src', runId: 'r-1', atTurn: 2, message: null, inheritedCostUsd: 0.004, fromFile: false });
    expect(cfg.definitionFrom?.changed).toEqual(['limits']);
    expect(from.state).toMatchObject({ turns: 2, callsProposed: 3, lastReplyFirstCall: 3 });
  });
});
