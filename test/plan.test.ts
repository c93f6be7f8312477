// The well-behaved run, end to end: a real server, worker and provider.
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { turnCostUsd } from '../common/turn-cost.js';
import { DEFAULT_PRICING } from '../common/defaults.js';
import { statusQuery, transcriptQuery } from '../common/run-messages.js';
import { useHarness } from './helpers/harness.js';
import { dataConverter } from '../node/payload-codec.js';
import { REPLAY_SINKS } from '../worker/create-worker.js';

const h = useHarness();

describe('plan scenario', () => {
  it('lists, reads and answers in 3 turns with 2 tool runs, and the cost is the price formula', async () => {
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', limits: { maxTurns: 20 } });
    const r = await handle.result();

    expect(r).toMatchObject({
      runId: handle.workflowId,
      status: 'completed',
      interruption: null,
      output: 'errors.log mentions a timeout: worker 7 timed out after 30000 ms.',
      error: null,
      turns: 3,
      toolRuns: 2,
    });
    // Every turn resends what came before: prompt tokens rise turn by turn.
    expect(r.promptTokensPerTurn).toHaveLength(3);
    expect(r.promptTokensPerTurn[1]).toBeGreaterThan(r.promptTokensPerTurn[0]);
    expect(r.promptTokensPerTurn[2]).toBeGreaterThan(r.promptTokensPerTurn[1]);
    expect(r.usage.promptTokens).toBe(r.promptTokensPerTurn.reduce((a, b) => a + b, 0));
    // Money is arithmetic over the usage: $2 in / $12 out per million tokens.
    const expected = (r.usage.promptTokens * 2 + r.usage.completionTokens * 12) / 1e6;
    expect(r.costUsd).toBeCloseTo(expected, 12);

    // The trace: one line per event, each with the run id and a gapless seq.
    expect(h.trace(handle.workflowId).every((l) => l.runId === handle.workflowId)).toBe(true);
    // Each tool ran once, on its first attempt.
    expect(h.trace(handle.workflowId).filter((l) => l.type === 'tool_exec').map((l) => [l.toolName, l.attempt])).toEqual([
      ['list_files', 1],
      ['read_file', 1],
    ]);
    const trace = h.events(handle.workflowId);
    expect(trace.map((l) => l.seq)).toEqual(trace.map((_, i) => i + 1));
    expect(trace.map((l) => l.type)).toEqual([
      'run_started',
      'turn', 'tool_start', 'tool_result',
      'turn', 'tool_start', 'tool_result',
      'turn', 'run_stopped',
    ]);
    const turns = trace.filter((l) => l.type === 'turn');
    expect(turns.map((l) => l.prompt_tokens)).toEqual(r.promptTokensPerTurn);
    // The running total in the last turn line is the result's cost.
    expect(turns[2].costUsd).toBeCloseTo(r.costUsd, 12);
    let sum = 0;
    for (const t of turns) sum += turnCostUsd({ promptTokens: Number(t.prompt_tokens), completionTokens: Number(t.completion_tokens) }, DEFAULT_PRICING);
    expect(sum).toBeCloseTo(r.costUsd, 12);
    expect(trace.find((l) => l.type === 'tool_start' && l.toolName === 'read_file')?.args).toEqual({ path: 'errors.log' });
    expect(trace.at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed', turns: 3 });

    // Queries work after the run closed too.
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'completed', turns: 3, toolRuns: 2 });
    const transcript = await handle.query(transcriptQuery);
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(transcript[4]).toMatchObject({ role: 'tool', tool_call_id: 'c2', name: 'read_file' });
    expect((transcript[4] as { content: string }).content).toContain('worker 7 timed out after 30000 ms');

    // Its history replays on the current code without a determinism error.
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, sinks: REPLAY_SINKS, dataConverter: dataConverter() },
      await handle.fetchHistory(),
      handle.workflowId,
    );
  });

  it('keeps a system prompt as the first message', async () => {
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', system: 'You are terse.' });
    await handle.result();
    const transcript = await handle.query(transcriptQuery);
    expect(transcript[0]).toEqual({ role: 'system', content: 'You are terse.' });
  });
});
