// Bad workflow input fails the run at once, non-retryable, naming the field.
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { AgentInput } from '../common/contract';
import { useHarness } from './harness';

const h = useHarness();

describe('workflow input validation', () => {
  it.each([
    ['missing task', {}, 'task'],
    ['empty task', { task: '  ' }, 'task'],
    ['task of the wrong type', { task: 42 }, 'task'],
    ['negative maxTurns', { task: 'x', limits: { maxTurns: -1 } }, 'limits.maxTurns'],
    ['fractional maxTurns', { task: 'x', limits: { maxTurns: 2.5 } }, 'limits.maxTurns'],
    ['non-numeric budget', { task: 'x', limits: { maxBudgetUsd: 'lots' } }, 'limits.maxBudgetUsd'],
    ['no limit at all', { task: 'x', limits: { maxTurns: null, maxBudgetUsd: null } }, 'limits'],
    ['unknown tool', { task: 'x', tools: ['list_files', 'rm_rf'] }, 'tools'],
    ['unknown toolErrors policy', { task: 'x', toolErrors: 'ignore' }, 'toolErrors'],
    ['unknown dedupe policy', { task: 'x', dedupe: 'sometimes' }, 'dedupe'],
    ['workspace escaping its root', { task: 'x', workspace: '../etc' }, 'workspace'],
    ['unknown field', { task: 'x', maxTurns: 3 }, 'maxTurns'],
  ])('%s -> a clear non-retryable error naming the field', async (_name, input, field) => {
    const handle = await h.start(input as unknown as AgentInput);
    const err = await handle.result().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ type: 'InvalidInput', nonRetryable: true });
    expect(cause?.message).toContain(`invalid input: ${field} `);
    // At once: the first workflow task fails the run; no task is retried, nothing waits.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
    expect(events.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
  });
});
