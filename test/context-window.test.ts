// Context management: a long run stays inside the model's window by eliding
// old tool results, without breaking the protocol. Pure properties first, then
// a real run on the dev server whose prompts stop growing once the window fills.
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applySummary, elideForWindow, isElided, LOW_WATERMARK, omittedTurns, planSummary } from '../common/context-window.js';
import type { ContextPolicy } from '../common/contract.js';
import { transcriptQuery } from '../common/run-messages.js';
import type { ChatMessage } from '../common/contract.js';
import { ensureWorkspace } from '../activities/tools/workspace.js';
import { freshWorkspace, useHarness } from './helpers/harness.js';
import { bytesPerTurn, chainEvents } from '../client/run-history.js';
import { propertyParams } from './helpers/property.js';


function transcript(turns: number[]): ChatMessage[] {
  const m: ChatMessage[] = [{ role: 'user', content: 'read' }];
  turns.forEach((size, t) => {
    m.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'read_file', arguments: '{"path":"p"}' } }] });
    m.push({ role: 'tool', tool_call_id: `c${t}`, name: 'read_file', content: 'x'.repeat(size) });
  });
  return m;
}

describe('elideForWindow', () => {
  it('keeps the task, every kept call with exactly one result, the recent turns untouched, and cuts to the low watermark when it can', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 40 }), fc.integer({ min: 1000, max: 50_000 }), fc.integer({ min: 0, max: 5 }), (sizes, windowTokens, keepRecentTurns) => {
        const messages = transcript(sizes);
        const before = structuredClone(messages);
        const policy: ContextPolicy = { windowTokens, strategy: 'elide', keepRecentTurns };
        const lastPrompt = Math.ceil(JSON.stringify(messages).length / 3);
        const cut = elideForWindow(messages, lastPrompt, messages.length, policy);
        if (!cut) {
          expect(messages).toEqual(before);
          return;
        }
        // The task first, untouched; a note right after it when turns were dropped.
        expect(messages[0]).toEqual(before[0]);
        if (cut.droppedTurns) expect(messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining(`the ${cut.droppedTurns} earliest turns`) });
        // The protocol: every kept call has exactly one result, every result its call.
        const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
        const results = messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
        expect(results).toEqual(calls);
        // The most recent turns are exactly as they were.
        const keep = 2 * Math.min(keepRecentTurns, sizes.length);
        if (keep) expect(messages.slice(-keep)).toEqual(before.slice(-keep));
        // Either under the low watermark, or nothing old is left to cut.
        const unprotected = messages.length - keep - (cut.droppedTurns ? 2 : 1);
        if (unprotected > 0) expect(cut.estimatedAfter).toBeLessThanOrEqual(windowTokens * LOW_WATERMARK);
        expect(messages.filter(isElided).length).toBeGreaterThanOrEqual(0);
      }),
      propertyParams(),
    );
  });
});

describe('planSummary and applySummary', () => {
  it('fold whole old turns into one note after the task, keep the recent turns and every kept call with its one result', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 40 }), fc.integer({ min: 1000, max: 50_000 }), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 3 }), (sizes, windowTokens, keepRecentTurns, rounds) => {
        const messages = transcript(sizes);
        const policy: ContextPolicy = { windowTokens, strategy: 'summarize', keepRecentTurns };
        let folded = 0;
        for (let i = 0; i <= rounds; i++) {
          const before = structuredClone(messages);
          const plan = planSummary(messages, Math.ceil(JSON.stringify(messages).length / 3), messages.length, policy);
          if (!plan) continue;
          expect(plan.turns).toBeGreaterThan(folded);
          folded = plan.turns;
          expect(plan.request[1].content).toContain('The turns to summarize');
          applySummary(messages, plan, `summary ${i}`);
          expect(messages[0]).toEqual(before[0]);
          expect(messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining(`summarized the ${plan.turns} earliest turns`) });
          expect(omittedTurns(messages)).toBe(plan.turns);
          const keep = 2 * Math.min(keepRecentTurns, sizes.length);
          if (keep) expect(messages.slice(-keep)).toEqual(before.slice(-keep));
          const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
          const results = messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
          expect(results).toEqual(calls);
        }
      }),
      propertyParams(),
    );
  });
});

const h = useHarness();
const page = (i: number) => Array.from({ length: 600 }, (_, w) => `w${(w * 7 + i * 13) % 997}`).join(' ');
const PAGE_CHARS = page(0).length;

describe('a long run with a context window', () => {
  it('60 turns of ~4 KB pages: every prompt stays under the window, and they stop growing once it fills', async () => {
    const ws = freshWorkspace();
    const dir = ensureWorkspace(h.workspaceRoot, ws);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `page${i}.txt`), page(i));
    const windowTokens = 12_000;
    const handle = await h.start({ task: 'Read every page.', model: 'bulky', workspace: ws, limits: { maxTurns: 60, maxBudgetUsd: null }, context: { windowTokens, strategy: 'elide' } });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 60 });
    const prompts = r.promptTokensPerTurn;
    expect(Math.max(...prompts)).toBeLessThan(windowTokens);
    // Without elision turn 60 would carry ~60 pages (over 100k tokens).
    const late = prompts.slice(40);
    const middle = prompts.slice(20, 40);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(late) / mean(middle)).toBeGreaterThan(0.75);
    expect(mean(late) / mean(middle)).toBeLessThan(1.25);
    console.log(`context window ${windowTokens}: prompt tokens per turn ${prompts.join(' ')}`);
    const elisions = h.events(handle.workflowId).filter((l) => l.type === 'context_elided');
    expect(elisions.length).toBeGreaterThan(1);
    // Stubs grow with the turns too: by now whole old turns have been dropped.
    expect(elisions.some((l) => Number(l.droppedTurns) > 0)).toBe(true);
    // The protocol holds in what the model was sent: every call has its one result.
    const messages = await handle.query(transcriptQuery);
    const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
    const results = messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
    expect(results).toEqual(calls);
    expect(messages.filter(isElided).length).toBeGreaterThan(5);
    // History grows by the same bytes every turn once the window is full, and
    // by little more than the turn's new tool result: a model call's input
    // holds the last prompt by address and only the new messages whole. (The
    // median: a turn that continues as new carries the state once.)
    const perTurn = bytesPerTurn(await chainEvents(h.client, handle.workflowId));
    expect(perTurn).toHaveLength(60);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ratio = median(perTurn.slice(40)) / median(perTurn.slice(20, 40));
    console.log(`history bytes per turn: ${perTurn.join(' ')} (median turns 41-60 / 21-40: ${ratio.toFixed(2)})`);
    expect(ratio).toBeGreaterThan(0.8);
    expect(ratio).toBeLessThan(1.2);
    expect(median(perTurn.slice(20))).toBeLessThan(2 * PAGE_CHARS);
  });
});

describe('a long run that summarizes', () => {
  it('40 turns of ~4 KB pages: old turns fold into a summary the model writes, paid from the run, and every prompt stays under the window', async () => {
    const ws = freshWorkspace();
    const dir = ensureWorkspace(h.workspaceRoot, ws);
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `page${i}.txt`), page(i));
    const windowTokens = 12_000;
    const handle = await h.start({ task: 'Read every page.', model: 'bulky', workspace: ws, limits: { maxTurns: 40, maxBudgetUsd: null }, context: { windowTokens, strategy: 'summarize' } });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 40 });
    expect(Math.max(...r.promptTokensPerTurn)).toBeLessThan(windowTokens);
    const lines = h.events(handle.workflowId);
    const summaries = lines.filter((l) => l.type === 'context_summarized');
    expect(summaries.length).toBeGreaterThan(1);
    expect(summaries.every((l) => Number(l.summaryCostUsd) > 0 && Number(l.prompt_tokens) > 0)).toBe(true);
    // Each summary folds the earlier one in: the count of folded turns only grows.
    const folded = summaries.map((l) => Number(l.turns));
    expect(folded).toEqual([...folded].sort((a, b) => a - b));
    // Honest money: the run's cost is its turns plus its summaries.
    const turns = lines.filter((l) => l.type === 'turn').reduce((a, l) => a + Number(l.turnCostUsd), 0);
    const paid = summaries.reduce((a, l) => a + Number(l.summaryCostUsd), 0);
    expect(r.costUsd).toBeCloseTo(turns + paid, 12);
    expect(r.usage.promptTokens).toBe(r.promptTokensPerTurn.reduce((a, b) => a + b, 0) + summaries.reduce((a, l) => a + Number(l.prompt_tokens), 0));
    // The transcript: the task, one summary note, then whole turns, each call with its one result.
    const messages = await handle.query(transcriptQuery);
    expect(messages[0]).toMatchObject({ role: 'user', content: 'Read every page.' });
    expect(messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining(`summarized the ${folded.at(-1)} earliest turns`) });
    expect(messages[1].content).toContain('Summary: Earlier the agent made');
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(2);
    const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
    const results = messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
    expect(results).toEqual(calls);
    // Turn numbering went on through the folds: the last call is the 40th.
    expect(calls.at(-1)).toBe('c39');
  });

  it('a summary that spends the budget stops the run right there, before another turn', async () => {
    const ws = freshWorkspace();
    const dir = ensureWorkspace(h.workspaceRoot, ws);
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `page${i}.txt`), page(i));
    const input = { task: 'Read every page.', model: 'bulky', workspace: ws, context: { windowTokens: 12_000, strategy: 'summarize' as const } };
    // A first run shows where the first summary falls and what it costs (the scripted provider is deterministic).
    const probe = await h.start({ ...input, limits: { maxTurns: 40, maxBudgetUsd: null } });
    await probe.result();
    const first = h.events(probe.workflowId).find((l) => l.type === 'context_summarized')!;
    const before = Number(first.costUsd) - Number(first.summaryCostUsd);
    // A budget the summary itself crosses.
    const handle = await h.start({ ...input, limits: { maxTurns: 40, maxBudgetUsd: before + Number(first.summaryCostUsd) / 2 } });
    const r = await handle.result();
    expect(r.status).toBe('budget_exceeded');
    const lines = h.events(handle.workflowId);
    const at = lines.findIndex((l) => l.type === 'context_summarized');
    expect(at).toBeGreaterThan(0);
    // Nothing but the stop after the summary: no model turn was paid past the budget.
    expect(lines.slice(at + 1).map((l) => l.type)).toEqual(['run_stopped']);
    expect(r.costUsd).toBeCloseTo(Number(first.costUsd), 12);
    expect(r.turns).toBe(lines.filter((l) => l.type === 'turn').length);
  });
});
