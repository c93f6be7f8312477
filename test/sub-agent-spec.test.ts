// Sub-agents of their own (issue 37 item 5): a sub-agent's spec carries its
// child's system prompt, model, tools and limits. Real runs: the file's
// server, a worker offering the team's sub-agent tools, the scripted provider
// over HTTP, whose request log says what reached the model: each child's
// requests carry its own system prompt and model and only its own tools, its
// limits stop it, it is priced as its own model, and what it spent is charged
// to its parent. A child may have sub-agents of its own (within
// MAX_SUB_AGENT_DEPTH), and the spec is part of the parent's definitionHash.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { BUILTIN_TOOLS } from '../activities/tools/builtin.js';
import { defineSubAgent, toolSpecOf, type SubAgentDefinition } from '../activities/tools/define-tool.js';
import { Toolset } from '../activities/tools/toolset.js';
import type { AgentInput, Pricing, RunResult } from '../common/contract.js';
import { BUILT_IN_DEFAULTS } from '../common/defaults.js';
import { definitionChanges, definitionHash, definitionSource } from '../common/definition.js';
import { parseInput } from '../common/input.js';
import { turnCostUsd } from '../common/turn-cost.js';
import { cancelSignal } from '../common/run-messages.js';
import { marker, providerRequests, useHarness, waitFor } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness();

const RESEARCHER_SYSTEM = 'You are the researcher. Answer from the files only, in one sentence.';
const MANAGER_SYSTEM = 'You are the manager. Delegate every question to the researcher.';
const PARENT_SYSTEM = 'You are the parent run.';
// The researcher's model priced at twice the default, so a child priced at its parent's rates would show.
const PLAN_PRICE: Pricing = { inputPerMTokUsd: 4, outputPerMTokUsd: 24 };

const question = { type: 'object', properties: { question: { type: 'string' } }, required: ['question'], additionalProperties: false } as const;
const subAgent = (name: string, spec: SubAgentDefinition['subAgent']): SubAgentDefinition =>
  defineSubAgent({ name, description: `The ${name} sub-agent: give it a question.`, parameters: question, readOnly: true, subAgent: spec });

// A researcher on its own model (the scripted `plan`: lists, reads, answers) with its own prompt and two tools;
// a looper (the scripted `runaway`, which never answers) held by its own turn cap;
// a manager (the scripted `script`) whose only tool is the researcher: a sub-agent of a sub-agent.
const researcher = subAgent('researcher', { taskArgument: 'question', tools: ['list_files', 'read_file'], system: RESEARCHER_SYSTEM, model: 'plan', limits: { maxTurns: 4, maxUsd: 0.04 } });
const looper = subAgent('looper', { taskArgument: 'question', tools: ['list_files'], model: 'runaway', limits: { maxTurns: 2 } });
const manager = subAgent('manager', { taskArgument: 'question', tools: ['researcher'], system: MANAGER_SYSTEM, model: 'script' });
// A child that never ends on its own (a high cap): what cancelling shows.
const spinner = subAgent('spinner', { taskArgument: 'question', tools: ['list_files'], model: 'runaway', limits: { maxTurns: 500, maxUsd: 0.5 } });
const toolset = () => new Toolset([...BUILTIN_TOOLS, researcher, looper, manager, spinner]);

/** A task for the scripted `script` model: these calls in its first turn, then an answer quoting the last result. */
const scripted = (words: string, calls: { name: string; args: Record<string, unknown> }[]) => `${words} script: ${JSON.stringify([calls])}`;

/** The parent's children, by tool name (its history's child starts; the tool name ends the child's id). */
async function childrenOf(handle: WorkflowHandle<typeof agentRun>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of (await handle.fetchHistory()).events ?? []) {
    const id = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    if (id) out[id.slice(id.lastIndexOf('/') + 1)] = id;
  }
  return out;
}

const HARD = { budgetMode: 'hard', minReplyTokens: 64, maxReplyTokens: 512 } as const;

describe("a sub-agent's own system prompt, model, tools and limits", () => {
  it('reach the provider on the child\'s requests, its turn cap stops it, it is priced as its own model, and the parent pays', async () => {
    const taskQueue = `sub-spec-${randomUUID().slice(0, 6)}`;
    const worker = await h.startWorker({ taskQueue, toolset: toolset(), modelPrices: { plan: PLAN_PRICE } });
    try {
      const m = marker();
      const input: AgentInput = {
        task: scripted(`Delegate ${m}.`, [
          { name: 'researcher', args: { question: `Which file mentions a timeout? ${m}` } },
          { name: 'looper', args: { question: `List the files forever. ${m}` } },
        ]),
        model: 'script',
        system: PARENT_SYSTEM,
        tools: ['researcher', 'looper', 'delete_file'],
        limits: { maxTurns: 5, maxBudgetUsd: 0.5, ...HARD },
      };
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `sub-spec-${randomUUID().slice(0, 8)}`, args: [input] });
      h.track(handle.workflowId);
      const r = await handle.result();
      expect(r.status).toBe('completed');

      const requests = await providerRequests(h.providerUrl, m);
      const byModel = (model: string) => requests.filter((q) => q.model === model);
      // The parent: its own prompt, model and tools.
      expect(byModel('script').length).toBeGreaterThan(0);
      for (const q of byModel('script')) expect(q).toMatchObject({ system: PARENT_SYSTEM, toolNames: ['researcher', 'looper', 'delete_file'] });
      // The researcher: its spec's prompt and model, and only the tools its spec lists.
      expect(byModel('plan')).toHaveLength(3);
      for (const q of byModel('plan')) expect(q).toMatchObject({ system: RESEARCHER_SYSTEM, toolNames: ['list_files', 'read_file'] });
      // The looper: no prompt of its spec, so none (not its parent's), and only list_files.
      expect(byModel('runaway')).toHaveLength(2);
      for (const q of byModel('runaway')) {
        expect(q.system).toBeUndefined();
        expect(q.toolNames).toEqual(['list_files']);
      }

      const ids = await childrenOf(handle);
      const research = await h.client.workflow.getHandle<typeof agentRun>(ids.researcher).result();
      const loop = await h.client.workflow.getHandle<typeof agentRun>(ids.looper).result();
      expect(research).toMatchObject({ status: 'completed', turns: 3 });
      // Its own turn cap (2), not the default 6.
      expect(loop).toMatchObject({ status: 'max_turns_exceeded', turns: 2 });
      // Its own budget cap, not the default $0.05.
      expect(h.events(ids.researcher)[0]).toMatchObject({ type: 'run_started', maxBudgetUsd: 0.04 });

      // Priced as its own model: the worker's price for `plan`, not the parent's (the default) rates.
      expect(research.costUsd).toBeCloseTo(turnCostUsd(research.usage, PLAN_PRICE), 12);
      expect(research.costUsd).toBeGreaterThan(turnCostUsd(research.usage, BUILT_IN_DEFAULTS.pricing) * 1.5);
      // Charged to the parent: its children's spend is the two children's, and in its own total.
      expect(r.children).toMatchObject({ runs: 2 });
      expect(r.children.costUsd).toBeCloseTo(research.costUsd + loop.costUsd, 12);
      const own = h.events(handle.workflowId).filter((l) => l.type === 'turn').reduce((a, l) => a + Number(l.turnCostUsd), 0);
      expect(r.costUsd).toBeCloseTo(own + research.costUsd + loop.costUsd, 12);
      // What the parent's model read: the researcher's answer, as the script's last tool result... or the looper's stop.
      expect(r.output).toMatch(/^Done\. The last tool said: /);
    } finally {
      await worker.shutdown();
    }
  });

  it('a sub-agent may have sub-agents of its own: parent → manager → researcher, each with its own prompt, all paid by the parent', async () => {
    const taskQueue = `sub-nest-${randomUUID().slice(0, 6)}`;
    const worker = await h.startWorker({ taskQueue, toolset: toolset() });
    try {
      const m = marker();
      const managerTask = scripted(`Manage ${m}.`, [{ name: 'researcher', args: { question: `Which file mentions a timeout? ${m}` } }]);
      const input: AgentInput = { task: scripted(`Delegate ${m}.`, [{ name: 'manager', args: { question: managerTask } }]), model: 'script', tools: ['manager'], limits: { maxTurns: 5, maxBudgetUsd: 0.5 } };
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `sub-nest-${randomUUID().slice(0, 8)}`, args: [input] });
      h.track(handle.workflowId);
      const r = await handle.result();
      expect(r.status).toBe('completed');
      expect(r.output).toBe('Done. The last tool said: Done. The last tool said: errors.log mentions a timeout: worker 7 timed out after 30000 ms.');

      const requests = await providerRequests(h.providerUrl, m);
      const managerRequests = requests.filter((q) => q.system === MANAGER_SYSTEM);
      expect(managerRequests.length).toBeGreaterThan(0);
      for (const q of managerRequests) expect(q).toMatchObject({ model: 'script', toolNames: ['researcher'] });
      expect(requests.filter((q) => q.model === 'plan').every((q) => q.system === RESEARCHER_SYSTEM)).toBe(true);

      const managerId = (await childrenOf(handle)).manager;
      const managerHandle = h.client.workflow.getHandle<typeof agentRun>(managerId);
      const researcherId = (await childrenOf(managerHandle)).researcher;
      const [mgr, res]: RunResult[] = [await managerHandle.result(), await h.client.workflow.getHandle<typeof agentRun>(researcherId).result()];
      expect(res.status).toBe('completed');
      // The grandchild's spend is in the manager's, and the manager's in the parent's.
      expect(mgr.children.costUsd).toBeCloseTo(res.costUsd, 12);
      expect(r.children.costUsd).toBeCloseTo(mgr.costUsd, 12);
      expect(r.costUsd).toBeGreaterThan(mgr.costUsd);
    } finally {
      await worker.shutdown();
    }
  });
});

describe('cancelling (docs/tools.md, "How to cancel")', () => {
  const spin = (m: string): AgentInput => ({
    task: scripted(`Spin ${m}.`, [{ name: 'spinner', args: { question: `List the files forever. ${m}` } }]),
    model: 'script',
    tools: ['spinner'],
    limits: { maxTurns: 5, maxBudgetUsd: 2 },
  });
  /** Starts a parent whose child spins, and waits until the child has made a call. */
  async function spinning(taskQueue: string) {
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `sub-cancel-${randomUUID().slice(0, 8)}`, args: [spin(marker())] });
    h.track(handle.workflowId);
    const childId = await waitFor('the spinner child to start', async () => (await childrenOf(handle)).spinner);
    await waitFor('the child to run a tool', () => h.trace(childId).some((l) => l.type === 'tool_result'));
    return { handle, child: h.client.workflow.getHandle<typeof agentRun>(childId) };
  }

  it('cancelling the child alone ends only it: the parent reads that it stopped, carries on, and pays what it spent', async () => {
    const taskQueue = `sub-cancel-${randomUUID().slice(0, 6)}`;
    const worker = await h.startWorker({ taskQueue, toolset: toolset() });
    try {
      const { handle, child } = await spinning(taskQueue);
      await child.signal(cancelSignal, { reason: 'ops stopped the child' });
      const [r, c] = [await handle.result(), await child.result()];
      expect(c).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'ops stopped the child' } });
      expect(r.status).toBe('completed');
      expect(r.output).toMatch(/the spinner sub-agent stopped with interrupted/);
      expect(c.costUsd).toBeGreaterThan(0);
      expect(r.children.costUsd).toBeCloseTo(c.costUsd, 12);
    } finally {
      await worker.shutdown();
    }
  });

  it('cancelling the parent stops the child with it, and the child\'s spend so far is still charged', async () => {
    const taskQueue = `sub-cancel-${randomUUID().slice(0, 6)}`;
    const worker = await h.startWorker({ taskQueue, toolset: toolset() });
    try {
      const { handle, child } = await spinning(taskQueue);
      await handle.signal(cancelSignal, { reason: 'the customer withdrew the ticket' });
      const r = await handle.result();
      expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'the customer withdrew the ticket' } });
      const c = await child.result();
      expect(c.status).toBe('interrupted');
      expect(c.costUsd).toBeGreaterThan(0);
      expect(r.children.costUsd).toBeCloseTo(c.costUsd, 12);
    } finally {
      await worker.shutdown();
    }
  });
});

describe("a sub-agent's spec in its parent's definitionHash", () => {
  const cfgWith = (system: string) => {
    const catalogue = new Toolset([...BUILTIN_TOOLS, subAgent('helper', { taskArgument: 'question', tools: ['list_files'], system, model: 'plan' })]).specs();
    return parseInput({ task: 't', model: 'script', tools: ['helper'] }, BUILT_IN_DEFAULTS, catalogue);
  };

  it('a changed child prompt, model, tools or limits moves the hash and is named as a change of tools', () => {
    const before = cfgWith('Be brief.');
    expect(definitionHash(cfgWith('Be brief.'))).toBe(definitionHash(before));
    const variants = [
      cfgWith('Be thorough.'),
      { ...before, toolSpecs: before.toolSpecs.map((s) => ({ ...s, subAgent: { taskArgument: 'question', tools: ['list_files'], system: 'Be brief.', model: 'runaway' } })) },
      { ...before, toolSpecs: before.toolSpecs.map((s) => ({ ...s, subAgent: { taskArgument: 'question', tools: ['list_files', 'read_file'], system: 'Be brief.', model: 'plan' } })) },
      { ...before, toolSpecs: before.toolSpecs.map((s) => ({ ...s, subAgent: { taskArgument: 'question', tools: ['list_files'], system: 'Be brief.', model: 'plan', limits: { maxTurns: 2 } } })) },
    ];
    for (const after of variants) {
      expect(definitionHash(after)).not.toBe(definitionHash(before));
      expect(definitionChanges(definitionSource(before), after)).toEqual(['tools']);
    }
    // A tool without a sub-agent hashes as it always did (no `subAgent: null` written for it).
    expect(toolSpecOf(BUILTIN_TOOLS[0]).subAgent).toBeUndefined();
  });
});
