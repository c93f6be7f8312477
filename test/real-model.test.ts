// A real model in the loop: llama-server over SmolLM2-135M-Instruct on this
// machine's CPU. Nothing here asserts what the model says — a 135M model is
// often wrong — only what the harness guarantees whatever it says: one of the
// five exits, a transcript that keeps the protocol, the turn cap and the
// budget, cost equal to the model's own counted usage priced, and every other
// promise in test/helpers/invariants.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { findFreePort } from '../worker/dev-server/dev-server.js';
import { startLocalModel, type LocalModel } from '../dev/model/local-model.js';
import { transcriptQuery } from '../common/run-messages.js';
import type { AgentInput } from '../common/contract.js';
import { freshWorkspace, useHarness } from './helpers/harness.js';
import { brokenPromises, decisionsInHistory, workflowTaskFailures } from './helpers/invariants.js';

let model: LocalModel | null = null;
const h = useHarness({
  llm: async () => {
    model = await startLocalModel({ port: await findFreePort(), files: inject('localModelFiles'), logFile: join(mkdtempSync(join(tmpdir(), 'llama-')), 'server.log') });
    return { url: model.url, model: model.model };
  },
  // The prices it always ran at, now stated: an unpriced model under a USD budget is refused at start.
  modelPrices: { '*': { inputPerMTokUsd: 2, outputPerMTokUsd: 12 } },
});
afterAll(async () => model?.stop());

describe('a real model in the loop', () => {
  it('one task end to end: every promise holds whatever the model says', { timeout: 300_000 }, async () => {
    const limits = { maxTurns: 4, maxBudgetUsd: 0.01 };
    // Unattended: a deletion the model asks for is refused by the clock, not left waiting.
    const input: AgentInput = { task: 'Which file in the workspace mentions a timeout?', workspace: freshWorkspace(), limits, approvalTimeoutMs: 2000 };
    const handle = await h.start(input);
    const r = await handle.result();
    const events = h.events(handle.workflowId);
    const broken = brokenPromises({
      result: r,
      input: { maxTurns: limits.maxTurns, maxBudgetUsd: limits.maxBudgetUsd, workspace: input.workspace! },
      transcript: await handle.query(transcriptQuery),
      events,
      trace: h.trace(handle.workflowId),
      decisionsSent: await decisionsInHistory(h.client, handle.workflowId),
      childTurnCosts: [],
      workspaceRoot: h.workspaceRoot,
      taskFailures: await workflowTaskFailures(h.client, handle.workflowId),
    });
    const turns = events.filter((l) => l.type === 'turn');
    console.log(
      `real model: ${r.status} after ${r.turns} turns, ${r.toolRuns} tool runs, in=${r.usage.promptTokens} out=${r.usage.completionTokens} ` +
        `cost=$${r.costUsd.toFixed(6)}; per turn ${turns.map((l) => `${String(l.prompt_tokens)}+${String(l.completion_tokens)} ${String(l.finish)}`).join(', ')}; ` +
        `answer: ${JSON.stringify((r.output ?? r.error ?? '').slice(0, 160))}`,
    );
    expect(broken).toEqual([]);
    // The usage is the model's own count (a real tokenizer), never zero for a real prompt.
    expect(r.turns).toBeGreaterThan(0);
    expect(turns.every((l) => Number(l.prompt_tokens) > 0)).toBe(true);
    // What the worker really sent is on record: the local model, not the input's default.
    expect(turns.every((l) => l.model === model!.model)).toBe(true);
  });
});
