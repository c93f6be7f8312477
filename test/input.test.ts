// Bad workflow input fails the run at once, non-retryable, naming the field.
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { AgentInput } from '../common/contract.js';
import { statusQuery } from '../common/run-messages.js';
import { AGENT_ERROR_TYPE, AGENT_STATUS } from '../common/search-attributes.js';
import { useHarness } from './helpers/harness.js';

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
    // A typo inside limits or pricing would leave the default in force without a word.
    ['misspelt budget', { task: 'x', limits: { maxBudgetUSD: 0.01 } }, 'limits.maxBudgetUSD'],
    ['misspelt turn cap', { task: 'x', limits: { maxTurn: 3 } }, 'limits.maxTurn'],
    ['misspelt price', { task: 'x', pricing: { inputPerMTok: 2 } }, 'pricing.inputPerMTok'],
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
    // The status query and the search attributes say so too, in one vocabulary.
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'failed', agentStatus: 'failed', errorType: 'InvalidInput', reason: cause?.message });
    const attrs = (await handle.describe()).typedSearchAttributes;
    expect(attrs.get(AGENT_STATUS)).toBe('failed');
    expect(attrs.get(AGENT_ERROR_TYPE)).toBe('InvalidInput');
    // At once: the first workflow task fails the run; no task is retried, nothing waits.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
    expect(events.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
  });
});
