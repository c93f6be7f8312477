// Budget as one strategy (issue 35 item 4): a soft and a hard budget call the
// same model activity, batch the sub-agent calls of one reply the same way
// (side by side), and a sub-agent's own limits on its spec bound each child.
// Real runs: the file's server and worker, the scripted provider over HTTP.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { defineSubAgent } from '../activities/tools/define-tool.js';
import { Toolset } from '../activities/tools/toolset.js';
import type { AgentInput } from '../common/contract.js';
import { marker, useHarness } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness();

/** Every activity type the run's history scheduled (ActivityTaskScheduled), with how often. */
async function scheduledActivities(handle: WorkflowHandle<typeof agentRun>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const e of (await handle.fetchHistory()).events ?? []) {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

/** The parent's child events in history order: `start` when a child was initiated, `end` when one closed. */
async function childEvents(handle: WorkflowHandle<typeof agentRun>): Promise<('start' | 'end')[]> {
  const out: ('start' | 'end')[] = [];
  for (const e of (await handle.fetchHistory()).events ?? []) {
    if (e.startChildWorkflowExecutionInitiatedEventAttributes) out.push('start');
    if (e.childWorkflowExecutionCompletedEventAttributes || e.childWorkflowExecutionFailedEventAttributes || e.childWorkflowExecutionCanceledEventAttributes) out.push('end');
  }
  return out;
}

const HARD = { budgetMode: 'hard', minReplyTokens: 64, maxReplyTokens: 512 } as const;

describe('one model activity, whatever the budget mode', () => {
  it('a soft-budget run and a hard-budget run both schedule callModel, and no other model activity', async () => {
    const soft = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', limits: { maxTurns: 10, maxBudgetUsd: 0.05 } });
    const hard = await h.start({ task: 'Which file mentions a timeout?', model: 'plan', limits: { maxTurns: 10, maxBudgetUsd: 0.05, ...HARD } });
    const [s, r] = [await soft.result(), await hard.result()];
    expect(s).toMatchObject({ status: 'completed', turns: 3 });
    expect(r).toMatchObject({ status: 'completed', turns: 3, budget: { mode: 'hard', heldUsd: 0 } });
    // The same activity by name for its three model turns, in either mode (its reads are local activities: markers, not scheduled).
    expect(await scheduledActivities(soft)).toEqual({ callModel: 3 });
    expect(await scheduledActivities(hard)).toEqual({ callModel: 3 });
    // The hard run's calls were sent within their holds; the soft run's hold nothing.
    expect(h.events(hard.workflowId).filter((l) => l.type === 'turn').every((l) => typeof l.heldUsd === 'number')).toBe(true);
    expect(h.events(soft.workflowId).filter((l) => l.type === 'turn').some((l) => 'heldUsd' in l)).toBe(false);
  });
});

describe('the one activity read back from history', () => {
  it('a hard-budget run forked at turn 2 inherits the cost of its first two turns, as a soft one does', async () => {
    for (const limits of [{ maxTurns: 10, maxBudgetUsd: 0.05 }, { maxTurns: 10, maxBudgetUsd: 0.05, ...HARD }]) {
      const source = await h.start({ task: `Which file mentions a timeout? ${marker()}`, model: 'plan', limits });
      expect(await source.result()).toMatchObject({ status: 'completed', turns: 3 });
      const costOfFirstTwo = h.events(source.workflowId).filter((l) => l.type === 'turn').slice(0, 2).reduce((a, l) => a + Number(l.turnCostUsd), 0);
      const fork = await h.start({ forkFrom: { run: source.workflowId, atTurn: 2 }, limits } as AgentInput);
      const r = await fork.result();
      expect(r.status).toBe('completed');
      expect(r.forkedFrom?.inheritedCostUsd).toBeCloseTo(costOfFirstTwo, 12);
    }
  });
});

describe('sub-agents batch the same way in both modes', () => {
  for (const mode of ['soft', 'hard'] as const) {
    it(`${mode} budget: the research calls of one reply start side by side, their budgets within what is left`, async () => {
      const budget = 0.03;
      const handle = await h.start({
        task: `tree:c0t1,c1t1,c2t1 ${marker()}`,
        model: 'tree',
        tools: ['research', 'list_files'],
        limits: { maxTurns: 8, maxBudgetUsd: budget, ...(mode === 'hard' ? HARD : {}) },
      });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'completed', output: 'Delegated.', children: { runs: 3 } });
      // Every child was started before any of them ended (a sequential batch would alternate start, end, start…).
      expect(await childEvents(handle)).toEqual(['start', 'start', 'start', 'end', 'end', 'end']);
      const events = h.events(handle.workflowId);
      const starts = events.filter((l) => l.type === 'tool_start' && l.toolName === 'research');
      expect(starts).toHaveLength(3);
      expect(events.findIndex((l) => l.type === 'tool_result')).toBeGreaterThan(events.lastIndexOf(starts[2]));
      // Each child its share of what the parent's first turn left, together never more than that.
      const left = budget - Number(events.find((l) => l.type === 'turn')?.turnCostUsd);
      const budgets = starts.map((l) => Number(l.budgetUsd));
      for (const b of budgets) expect(b).toBeGreaterThan(0);
      expect(budgets.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(left + 1e-12);
      expect(budgets[0]).toBeCloseTo(left / 3, 9);
      if (mode === 'hard') expect(r.costUsd).toBeLessThanOrEqual(budget);
    });
  }
});

describe("a sub-agent's own limits", () => {
  // A team's own sub-agent tool with limits of its own (the scripted provider's `delegate_runaway` calls it by name).
  const withLimits = (limits: { maxTurns?: number; maxUsd?: number }) =>
    new Toolset([
      ...BUILTIN_TOOLS,
      defineSubAgent({
        name: 'delegate',
        description: 'Delegate a research question to a sub-agent that can list and read files.',
        parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'], additionalProperties: false },
        readOnly: true,
        subAgent: { taskArgument: 'question', tools: ['list_files'], limits },
      }),
    ]);
  const runaway = (limits: AgentInput['limits']): AgentInput => ({ task: `Delegate. ${marker()}`, model: 'delegate_runaway', tools: ['delegate'], limits });

  it('maxTurns: the child stops at its own turn cap, not the default 6', async () => {
    const taskQueue = `sub-turns-${randomUUID().slice(0, 6)}`;
    const worker = await h.startWorker({ taskQueue, toolset: withLimits({ maxTurns: 2 }) });
    try {
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `sub-turns-${randomUUID().slice(0, 8)}`, args: [runaway({ maxTurns: 5, maxBudgetUsd: 0.05 })] });
      h.track(handle.workflowId);
      const r = await handle.result();
      expect(r.status).toBe('completed');
      const child = await h.client.workflow.getHandle<typeof agentRun>(`${handle.workflowId}/m1/d1/delegate`).result();
      expect(child).toMatchObject({ status: 'max_turns_exceeded', turns: 2 });
      expect(r.output).toContain('max_turns_exceeded');
    } finally {
      await worker.shutdown();
    }
  });

  for (const mode of ['soft', 'hard'] as const) {
    it(`maxUsd (${mode} budget): the child is given its own cap, not the default $0.05, and stops for it`, async () => {
      const maxUsd = 0.0015;
      const taskQueue = `sub-usd-${mode}-${randomUUID().slice(0, 6)}`;
      const worker = await h.startWorker({ taskQueue, toolset: withLimits({ maxTurns: 50, maxUsd }) });
      try {
        const limits = { maxTurns: 5, maxBudgetUsd: 0.5, ...(mode === 'hard' ? HARD : {}) };
        const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `sub-usd-${randomUUID().slice(0, 8)}`, args: [runaway(limits)] });
        h.track(handle.workflowId);
        const r = await handle.result();
        expect(r.status).toBe('completed');
        expect(h.events(handle.workflowId).find((l) => l.type === 'tool_start' && l.toolName === 'delegate')).toMatchObject({ budgetUsd: maxUsd });
        const childId = `${handle.workflowId}/m1/d1/delegate`;
        expect(h.events(childId)[0]).toMatchObject({ type: 'run_started', maxBudgetUsd: maxUsd });
        const child = await h.client.workflow.getHandle<typeof agentRun>(childId).result();
        expect(child.status).toBe('budget_exceeded');
        expect(child.turns).toBeGreaterThan(0);
        expect(child.turns).toBeLessThan(50);
        // A soft child may pass its cap by its last turn; a hard one never does.
        if (mode === 'hard') expect(child.costUsd).toBeLessThanOrEqual(maxUsd);
        else expect(child.costUsd).toBeGreaterThanOrEqual(maxUsd);
        expect(r.children.costUsd).toBeCloseTo(child.costUsd, 12);
      } finally {
        await worker.shutdown();
      }
    });
  }
});
