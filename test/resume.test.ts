// Resume: a stopped run (turn cap, budget, interrupted) continues in a new run
// with raised limits — its transcript and totals carry on, its pending calls
// are drained first — through `resumeFrom` (and `agent-harness resume`). A
// completed or failed run is refused with the reason.
import { WorkflowFailedError } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approveSignal, configQuery, transcriptQuery } from '../common/run-messages.js';
import type { RunResult } from '../common/contract.js';
import { freshWorkspace, useHarness, waitForApproval } from './helpers/harness.js';

const h = useHarness();
const task = 'Which file mentions a timeout?';

describe('resume', () => {
  it('a run stopped at its turn cap continues with a higher cap: totals and transcript carry on', async () => {
    const first = await h.start({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: 3, maxBudgetUsd: null } });
    const stopped = await first.result();
    expect(stopped).toMatchObject({ status: 'max_turns_exceeded', turns: 3 });
    const before = await first.query(transcriptQuery);

    const next = await h.start({ resumeFrom: first.workflowId, limits: { maxTurns: 6 } } as never);
    const r = await next.result();
    // The cap counts the totals: three more turns, then the cap again.
    expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 6, toolRuns: 6 });
    expect(r.promptTokensPerTurn.slice(0, 3)).toEqual(stopped.promptTokensPerTurn);
    const added = r.promptTokensPerTurn.slice(3).reduce((a, b) => a + b, 0);
    expect(r.usage.promptTokens).toBe(stopped.usage.promptTokens + added);
    expect(r.costUsd).toBeGreaterThan(stopped.costUsd);
    const after = await next.query(transcriptQuery);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(h.events(next.workflowId)[0]).toMatchObject({ type: 'run_started', resumedFrom: first.workflowId, turns: 3, maxTurns: 6, model: 'runaway' });
  });

  it('a resumed run can be resumed again: the whole configuration carries on, not only the last input', async () => {
    // Non-default model, policies and tools, so a fallback to a default would show.
    const base = { task, model: 'runaway', dedupe: 'off', toolErrors: 'generic', tools: ['list_files', 'read_file'], limits: { maxTurns: 3, maxBudgetUsd: null } } as const;
    const one = await h.start(base as never);
    await one.result();
    const two = await h.start({ resumeFrom: one.workflowId, limits: { maxTurns: 6 } } as never);
    await two.result();
    const three = await h.start({ resumeFrom: two.workflowId, limits: { maxTurns: 9 } } as never);
    const r = await three.result();
    expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 9, toolRuns: 9 });
    expect(await three.query(configQuery)).toMatchObject({ task, model: 'runaway', dedupe: 'off', toolErrors: 'generic', tools: ['list_files', 'read_file'], maxTurns: 9, maxBudgetUsd: null, resumeFrom: two.workflowId });
  });

  it('property: any chain of stop and resume ends where one run with the last cap ends — no turn, message or cost lost or repeated', async () => {
    const direct = new Map<number, { result: RunResult; messages: unknown }>();
    const straight = async (cap: number) => {
      if (!direct.has(cap)) {
        const run = await h.start({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: cap, maxBudgetUsd: null } });
        direct.set(cap, { result: (await run.result()), messages: await run.query(transcriptQuery) });
      }
      return direct.get(cap) as { result: RunResult; messages: unknown };
    };
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }), async (first, steps) => {
        let run = await h.start({ task, model: 'runaway', dedupe: 'off', limits: { maxTurns: first, maxBudgetUsd: null } });
        let cap = first;
        await run.result();
        for (const step of steps) {
          cap += step;
          run = await h.start({ resumeFrom: run.workflowId, limits: { maxTurns: cap } } as never);
          await run.result();
        }
        const chained = await run.result();
        const one = await straight(cap);
        // Where it came from is the chain's own (its source's hash, the limits it raised); the definition itself is the same.
        const { runId: _a, workflowId: _c, sourceDefinitionHash: _e, definitionChanged: _f, ...chainedTotals } = chained;
        const { runId: _b, workflowId: _d, ...directTotals } = one.result;
        expect(chainedTotals).toEqual(directTotals);
        expect(await run.query(transcriptQuery)).toEqual(one.messages);
      }),
      { numRuns: Number(process.env.RESUME_CHAIN_RUNS ?? 6), endOnFailure: true },
    );
  });

  it('a run interrupted on an approval: the resumed run asks again for the pending call first, and approving runs it', async () => {
    const ws = freshWorkspace();
    const first = await h.start({ task, model: 'destructive', workspace: ws, approvalTimeoutMs: 300 });
    expect(await first.result()).toMatchObject({ status: 'interrupted', interruption: { type: 'approval', callId: 'c2' }, turns: 2 });
    const next = await h.start({ resumeFrom: first.workflowId, approvalTimeoutMs: null } as never);
    const parked = await waitForApproval(next, 'c2');
    // Drained before any new model call: still turn 2.
    expect(parked).toMatchObject({ turns: 2, interruption: { toolName: 'delete_file', args: { path: 'access.log' } } });
    await next.signal(approveSignal, { callId: 'c2', by: 'alice' });
    expect(await next.result()).toMatchObject({ status: 'completed', turns: 3, output: 'Deleted access.log to free space.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
  });

  it.each([
    ['completed', { task, model: 'plan' }, /is completed: the model already answered/],
    ['failed', { task, model: 'recover', toolErrors: 'fatal' }, /is failed: it failed/],
  ])('a %s run is refused with the reason', async (_label, input, reason) => {
    const first = await h.start(input as never);
    await first.result();
    const err = await (await h.start({ resumeFrom: first.workflowId } as never)).result().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toMatchObject({ type: 'ResumeRefused', nonRetryable: true, message: expect.stringMatching(reason) });
  });

  it('an unknown or still running run is refused', async () => {
    const none = await (await h.start({ resumeFrom: `no-such-${freshWorkspace()}` } as never)).result().then(() => null, (e: unknown) => e);
    expect((none as WorkflowFailedError).cause?.message).toMatch(/there is no run/);
    const live = await h.start({ task, model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(live, 'c2');
    const busy = await (await h.start({ resumeFrom: live.workflowId } as never)).result().then(() => null, (e: unknown) => e);
    expect((busy as WorkflowFailedError).cause?.message).toMatch(/is still running/);
    await live.signal(approveSignal, { callId: 'c2' });
    await live.result();
  });
});
