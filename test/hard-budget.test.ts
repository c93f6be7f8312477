// The hard budget (limits.budgetMode "hard") driven the way ops drive it: the
// real `temporal` CLI starts a run, queries it parked awaiting_budget, and
// raises its budget with the raiseBudget update; a timeout ends a parked run
// budget_exceeded; a provider whose usage lies is caught; a model without a
// price is refused at start. Real server, real worker, scripted provider.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import type { RunStatusView } from '../common/contract.js';
import { cancelSignal, statusQuery } from '../common/run-messages.js';
import { addFault, freshWorkspace, marker, useHarness, waitFor } from './helpers/harness.js';
import { costUsd } from '../common/budget-math.js';
import { cliRunResult } from './helpers/temporal-cli.js';

const h = useHarness();
const exec = promisify(execFile);

async function temporal(...args: string[]): Promise<string> {
  const { stdout } = await exec(findTemporalCli(), [...args, '--address', h.address, '--output', 'json'], { timeout: 30_000 });
  return stdout;
}

/** The temporal CLI's words when it fails (a refused update), or null when it succeeded. */
async function temporalRefusal(...args: string[]): Promise<string | null> {
  return temporal(...args).then(
    () => null,
    (e: { stderr?: string; message: string }) => `${e.stderr ?? ''} ${e.message}`,
  );
}

const statusOf = async (id: string) => JSON.parse(await temporal('workflow', 'query', '--workflow-id', id, '--name', 'status')).queryResult[0] as RunStatusView;

describe('hard budget through the temporal CLI', () => {
  it('parks awaiting_budget before a call it cannot pay, says what it needs, and goes on after raiseBudget', async () => {
    const id = `hard-park-${freshWorkspace()}`;
    // plan's first turn fits $0.004 (204 prompt tokens and a 256-token reply at worst); its second cannot.
    const input = { task: `Which file mentions a timeout? ${marker()}`, model: 'plan', limits: { maxTurns: 10, maxBudgetUsd: 0.004, budgetMode: 'hard', minReplyTokens: 256 } };
    await temporal('workflow', 'start', '--type', 'agentRun', '--task-queue', h.taskQueue, '--workflow-id', id, '--input', JSON.stringify(input));

    const parked = await waitFor('the run to park on its budget', async () => {
      const s = await statusOf(id);
      return s.agentStatus === 'awaiting_budget' ? s : null;
    });
    expect(parked).toMatchObject({ status: 'interrupted', turns: 1, interruption: { type: 'budget', maxBudgetUsd: 0.004, minReplyTokens: 256 }, budget: { mode: 'hard', maxBudgetUsd: 0.004 } });
    const need = parked.interruption?.type === 'budget' ? parked.interruption : null;
    expect(need?.needBudgetUsd).toBeGreaterThan(0.004);
    expect(need?.promptTokens).toBeGreaterThan(200);
    // Nothing was sent for the call it could not pay: spend is the first turn's.
    expect(parked.costUsd).toBeLessThanOrEqual(0.004);
    // The search attribute says so too: ops find parked runs without asking each.
    await waitFor('AgentStatus="awaiting_budget" in the visibility store', async () => {
      const rows = (await temporal('workflow', 'list', '--query', `WorkflowId="${id}" AND AgentStatus="awaiting_budget"`)).trim();
      return rows.includes(id);
    });

    // A raise that is not higher is refused by the validator, with the reason.
    const refused = await temporalRefusal('workflow', 'update', 'execute', '--workflow-id', id, '--name', 'raiseBudget', '--input', JSON.stringify({ maxBudgetUsd: 0.003, by: 'alice' }));
    expect(refused).toContain('maxBudgetUsd must be higher than the current budget of $0.004, got 0.003');

    await temporal('workflow', 'update', 'execute', '--workflow-id', id, '--name', 'raiseBudget', '--input', JSON.stringify({ maxBudgetUsd: 0.02, by: 'alice', reason: 'the answer is worth it' }));
    const result = await cliRunResult(h.client, h.address, id);
    expect(result).toMatchObject({ status: 'completed', turns: 3, output: 'errors.log mentions a timeout: worker 7 timed out after 30000 ms.' });
    expect(result.costUsd).toBeLessThanOrEqual(0.02);
    expect(result.budget).toMatchObject({ mode: 'hard', maxBudgetUsd: 0.02, heldUsd: 0, raises: [{ fromUsd: 0.004, toUsd: 0.02, by: 'alice', reason: 'the answer is worth it' }] });
    expect(result.usageOverReservation).toBeNull();
    const trace = h.events(id);
    expect(trace.filter((l) => l.type === 'budget_awaited')).toHaveLength(1);
    expect(trace.find((l) => l.type === 'budget_raised')).toMatchObject({ fromUsd: 0.004, toUsd: 0.02, by: 'alice', wasParked: true });
    // Each turn says what it was sent with and held: the reply never cost more.
    for (const t of trace.filter((l) => l.type === 'turn')) {
      expect(Number(t.completion_tokens)).toBeLessThanOrEqual(Number(t.maxTokens));
      expect(Number(t.chargedUsd)).toBeLessThanOrEqual(Number(t.heldUsd));
    }
  });

  it('a parked run whose budgetTimeoutMs passes ends budget_exceeded, never past its budget; the soft run overshoots', async () => {
    const limits = { maxTurns: 60, maxBudgetUsd: 0.01 };
    const [soft, hard] = await Promise.all([
      h.run({ task: `Keep listing. ${marker()}`, model: 'runaway', limits }),
      h.run({ task: `Keep listing. ${marker()}`, model: 'runaway', limits: { ...limits, budgetMode: 'hard' }, budgetTimeoutMs: 50 }),
    ]);
    expect(soft.status).toBe('budget_exceeded');
    expect(soft.costUsd).toBeGreaterThan(0.01);
    expect(hard).toMatchObject({ status: 'budget_exceeded', interruption: { type: 'max_budget' } });
    expect(hard.reason).toMatch(/^no raise within 50 ms: the next model call needs \$0\.\d{6} at worst/);
    expect(hard.costUsd).toBeLessThanOrEqual(0.01);
    // It stopped for want of budget, not earlier: the next call's worst case did not fit.
    const awaited = h.events(hard.workflowId).find((l) => l.type === 'budget_awaited');
    expect(Number(hard.costUsd) + Number(awaited?.needUsd)).toBeGreaterThan(0.01);
  });

  it('agent-harness raise-budget: refused unless higher, then the run goes on', async () => {
    const env = { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir };
    const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
    const handle = await h.start({ task: `Keep listing. ${marker()}`, model: 'runaway', limits: { maxTurns: 40, maxBudgetUsd: 0.005, budgetMode: 'hard' } });
    const parkedAt = async (max: number) =>
      waitFor(`the run parked at $${max}`, async () => {
        const s = await handle.query(statusQuery);
        return s.agentStatus === 'awaiting_budget' && s.interruption?.type === 'budget' && s.interruption.maxBudgetUsd === max ? s : null;
      });
    const first = await parkedAt(0.005);
    const low = await exec(bin, ['raise-budget', handle.workflowId, '--to', '0.004', '--by', 'bob'], { env, timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(low.code).toBe(1);
    expect(low.stderr).toContain('refused: maxBudgetUsd must be higher than the current budget of $0.005, got 0.004');
    // A raise below what the parked call needs is accepted, and says the run stays parked and what would do.
    const need = first.interruption?.type === 'budget' ? first.interruption : null;
    expect(need?.needBudgetUsd).toBeGreaterThan(0.005);
    const short = (0.005 + Number(need?.needBudgetUsd)) / 2;
    const little = await exec(bin, ['raise-budget', handle.workflowId, '--to', String(short), '--by', 'bob'], { env, timeout: 60_000 });
    expect(little.stdout).toContain(`budget of ${handle.workflowId} raised from $0.005 to $${short}, but its next model call needs`);
    expect(little.stdout).toContain(`a budget of at least $${need?.needBudgetUsd}: the run stays parked awaiting_budget; raise-budget ${handle.workflowId} --to `);
    await parkedAt(short);
    const ok = await exec(bin, ['raise-budget', handle.workflowId, '--to', '0.008', '--by', 'bob', '--reason', 'one more look'], { env, timeout: 60_000 });
    expect(ok.stdout).toMatch(new RegExp(`^budget of ${handle.workflowId} raised from \\$${String(short).replace('.', '\\.')} to \\$0\\.008; the run goes on: its next model call needs \\$0\\.\\d{6} at worst, about \\d+ calls? like it at that rate before it parks again`));
    // runaway never answers: it spends the raise and parks again, later.
    const second = await parkedAt(0.008);
    expect(second.turns).toBeGreaterThan(first.turns);
    expect(second.costUsd).toBeLessThanOrEqual(0.008);
    await handle.signal(cancelSignal, { reason: 'enough' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'enough' } });
    expect(r.budget?.raises).toEqual([
      { fromUsd: 0.005, toUsd: short, by: 'bob', reason: null },
      { fromUsd: short, toUsd: 0.008, by: 'bob', reason: 'one more look' },
    ]);
  });

  it('agent-harness list --awaiting shows a run parked on its budget', async () => {
    const env = { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir };
    const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');
    const handle = await h.start({ task: `Keep listing. ${marker()}`, model: 'runaway', limits: { maxTurns: 40, maxBudgetUsd: 0.005, budgetMode: 'hard' } });
    await waitFor('the run parked on its budget', async () => ((await handle.query(statusQuery)).agentStatus === 'awaiting_budget' ? true : null));
    const row = await waitFor('the parked run in `list --awaiting`', async () => {
      const { stdout } = await exec(bin, ['list', '--awaiting'], { env, timeout: 60_000 });
      return stdout.split('\n').find((l) => l.startsWith(handle.workflowId));
    });
    expect(row).toMatch(/RUNNING\s+awaiting_budget\s/);
    await handle.signal(cancelSignal, { reason: 'enough' });
    await handle.result();
  });

  it('a hard run resumed with a higher budget stays hard, its totals counted against the new budget', async () => {
    const first = await h.run({ task: `Keep listing. ${marker()}`, model: 'runaway', limits: { maxTurns: null, maxBudgetUsd: 0.005, budgetMode: 'hard', minReplyTokens: 64 }, budgetTimeoutMs: 1 });
    expect(first.status).toBe('budget_exceeded');
    const resumed = await h.run({ task: 'ignored', resumeFrom: first.workflowId, limits: { maxBudgetUsd: 0.009 } });
    expect(resumed).toMatchObject({ status: 'budget_exceeded', budget: { mode: 'hard', maxBudgetUsd: 0.009 } });
    expect(resumed.turns).toBeGreaterThan(first.turns);
    expect(resumed.costUsd).toBeGreaterThan(first.costUsd);
    expect(resumed.costUsd).toBeLessThanOrEqual(0.009);
  });

  it('a reply whose usage reports more completion tokens than max_tokens is counted, flagged, and stops the run', async () => {
    const r = await h.run({ task: `Which file mentions a timeout? ${marker()}`, model: 'overbill', limits: { maxBudgetUsd: 0.05, budgetMode: 'hard', maxReplyTokens: 512 } });
    expect(r).toMatchObject({ status: 'failed', errorType: 'UsageOverReservation', turns: 2 });
    const flag = r.usageOverReservation;
    expect(flag).toMatchObject({ turn: 2, maxTokens: 512 });
    expect(flag?.completionTokens).toBeGreaterThan(512);
    // Counted: the tokens the provider claimed are in the usage; charged: never past the hold, nor the budget.
    expect(r.usage.completionTokens).toBeGreaterThanOrEqual(flag?.completionTokens ?? Infinity);
    expect(r.costUsd).toBeLessThanOrEqual(0.05);
    expect(flag?.excessUsd).toBeGreaterThan(0);
    expect(h.events(r.workflowId).find((l) => l.type === 'usage_over_reservation')).toMatchObject({ maxTokens: 512, turn: 2 });
    // The call the lying reply asked for was not run, and says so.
    expect(r.toolRuns).toBe(1);
  });

  it('a model whose tokenizer counts 2.5 × ours + 300: held exactly, its first reply costs more than the hold and stops the run; with the measured margin every reply stays inside its hold', async () => {
    const tokenizer = { type: 'tokenizer' as const, factor: 2.5, overheadTokens: 300 };
    const limits = { maxBudgetUsd: 0.05, budgetMode: 'hard' as const, minReplyTokens: 32, maxReplyTokens: 64 };
    const exactM = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: exactM }, fault: tokenizer, times: 10 });
    const exact = await h.run({ task: `Which file mentions a timeout? ${exactM}`, model: 'plan', limits });
    expect(exact).toMatchObject({ status: 'failed', errorType: 'UsageOverReservation', turns: 1 });
    expect(exact.usageOverReservation?.reportedUsd).toBeGreaterThan(exact.usageOverReservation?.reservedUsd ?? Infinity);
    expect(exact.costUsd).toBeLessThanOrEqual(0.05);

    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m }, fault: tokenizer, times: 10 });
    const pricing = { inputPerMTokUsd: 2, outputPerMTokUsd: 12, promptCount: { factor: 3, overheadTokens: 600 } };
    const r = await h.run({ task: `Which file mentions a timeout? ${m}`, model: 'plan', limits, pricing });
    expect(r).toMatchObject({ status: 'completed', turns: 3, usageOverReservation: null });
    expect(r.costUsd).toBeLessThanOrEqual(0.05);
    const turns = h.events(r.workflowId).filter((l) => l.type === 'turn');
    expect(turns).toHaveLength(3);
    for (const t of turns) {
      // What the provider billed (its own count) at the run's prices never passed what was held for it.
      const billed = costUsd({ promptTokens: Number(t.prompt_tokens), completionTokens: Number(t.completion_tokens) }, pricing);
      expect(billed).toBeLessThanOrEqual(Number(t.heldUsd));
      expect(Number(t.chargedUsd)).toBe(billed);
    }
  });

  it('a model without a price is refused at start, naming it; the same input with its price runs', async () => {
    const input = { task: 'Which file mentions a timeout?', model: 'house-model-7b', limits: { maxBudgetUsd: 0.05, budgetMode: 'hard' as const } };
    const err = await (await h.start(input)).result().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause?.message).toBe(
      'invalid input: model "house-model-7b" has no price, and a hard budget (limits.budgetMode "hard") needs one: give "pricing" in the input or list the model in the worker\'s AGENT_MODEL_PRICES (a "*" entry prices every model it does not list), or set limits.maxBudgetUsd to null',
    );
    // Soft too (issue 37): a default price would make the cap mean nothing. With its price, the run starts (and the provider answers 404 for a model it does not know).
    const soft = await (await h.start({ ...input, limits: { maxBudgetUsd: 0.05 } })).result().then(() => null, (e: unknown) => e);
    expect((soft as WorkflowFailedError).cause?.message).toContain('a USD budget (limits.maxBudgetUsd 0.05) needs one');
    const priced = await h.run({ ...input, limits: { maxBudgetUsd: 0.05 }, pricing: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } });
    expect(priced).toMatchObject({ status: 'failed', errorType: 'ProviderUnknownModel' });
  });
});
