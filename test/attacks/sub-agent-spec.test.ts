// Attacks on a sub-agent's own definition (SubAgentSpec system, model, tools;
// issue 37 item 5): whatever a tool author or a plain object given to the
// worker puts there, a bad spec stops the worker at start (defineSubAgent, or
// AgentPlugin when the worker is created) with a message naming the sub-agent
// and what is wrong, never a run whose children fail one by one: a tool the
// worker does not offer, a sub-agent that lists itself or comes back to
// itself through another, nesting past MAX_SUB_AGENT_DEPTH, an empty or huge
// system prompt, a model name with characters no model has, a misspelt field.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WorkerOptions } from '@temporalio/worker';
import { BUILTIN_TOOLS } from '../../activities/tools/builtin.js';
import { defineSubAgent, type SubAgentDefinition } from '../../activities/tools/define-tool.js';
import { Toolset } from '../../activities/tools/toolset.js';
import { MAX_SUB_AGENT_DEPTH, MAX_SUB_AGENT_SYSTEM_CHARS } from '../../common/defaults.js';
import { buildToolset } from '../../worker/toolset.js';
import { OPTION_NAMES } from '../../worker/setting-names.js';
import { AgentPlugin } from '../../worker/agent-plugin.js';
import { marker, providerRequests, useHarness } from '../helpers/harness.js';
import type { agentRun } from '../../workflows/index.js';

const h = useHarness();

/** A sub-agent as a plain object (never through defineSubAgent), with `spec` over a good one. */
const sub = (name: string, spec: Record<string, unknown>): SubAgentDefinition =>
  ({
    name,
    description: `The ${name} sub-agent.`,
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    readOnly: true,
    subAgent: { taskArgument: 'q', tools: ['list_files'], ...spec },
  }) as SubAgentDefinition;

/** Refused by defineSubAgent and by a worker given the plain object, both naming the tool and the field. */
function refusedEverywhere(def: SubAgentDefinition, message: RegExp): void {
  expect(() => defineSubAgent(def)).toThrow(new RegExp(`^defineSubAgent: tool ${def.name}: `));
  expect(() => defineSubAgent(def)).toThrow(message);
  const build = () => buildToolset({ tools: [def], only: null, names: OPTION_NAMES });
  expect(build).toThrow(new RegExp(`AgentPlugin option tools\\[0\\]: tool ${def.name}: `));
  expect(build).toThrow(message);
}

describe('a sub-agent naming tools the worker does not offer', () => {
  it('is refused when the toolset is built, naming the sub-agent, the unknown tool and what is offered', () => {
    const def = defineSubAgent(sub('delegate', { tools: ['list_files', 'rm_rf'] }));
    const build = () => buildToolset({ tools: [def], only: null, names: OPTION_NAMES });
    expect(build).toThrow(/^sub-agent tool delegate gives its child rm_rf, which this worker does not offer \(offered: list_files, read_file, delete_file, scan_archive, research, delegate\)$/);
  });

  it('AgentPlugin refuses it when the worker is created, before anything is asked of the server', async () => {
    const plugin = new AgentPlugin({ model: { baseUrl: 'http://127.0.0.1:9/v1' }, workspace: mkdtempSync(join(tmpdir(), 'sub-spec-')), tools: [defineSubAgent(sub('delegate', { tools: ['rm_rf'] }))] });
    await expect(plugin.configureWorker({ taskQueue: `sub-spec-${randomUUID().slice(0, 6)}` } as WorkerOptions)).rejects.toThrow(/sub-agent tool delegate gives its child rm_rf, which this worker does not offer/);
  });

  it('a worker narrowed (only / AGENT_TOOLS) past a child\'s tool is refused, not left with a child that fails', () => {
    const def = defineSubAgent(sub('delegate', { tools: ['read_file'] }));
    expect(() => buildToolset({ tools: [def], only: ['delegate', 'list_files'], names: OPTION_NAMES })).toThrow(/sub-agent tool delegate gives its child read_file, which this worker does not offer/);
  });

  it.each([[[42]], [['has space']], [['']], ['list_files'], [null], [{ 0: 'list_files' }]])('tools %j is refused as not a list of tool names', (tools) => {
    refusedEverywhere(sub('delegate', { tools }), /subAgent\.tools /);
  });
});

describe('a sub-agent that recurses', () => {
  it('listing itself is refused at definition', () => {
    refusedEverywhere(sub('delegate', { tools: ['list_files', 'delegate'] }), /subAgent\.tools lists delegate itself: a sub-agent may not start a child of its own kind/);
  });

  it('coming back to itself through another (a → b → a, a → b → c → b) is refused when the toolset is built, naming the cycle', () => {
    const a = defineSubAgent(sub('a', { tools: ['b'] }));
    const b = defineSubAgent(sub('b', { tools: ['a'] }));
    expect(() => new Toolset([...BUILTIN_TOOLS, a, b])).toThrow('sub-agent tool a starts itself again through its children (a → b → a): a sub-agent may not be its own descendant');
    const b2 = defineSubAgent(sub('b', { tools: ['c'] }));
    const c = defineSubAgent(sub('c', { tools: ['list_files', 'b'] }));
    expect(() => new Toolset([...BUILTIN_TOOLS, a, b2, c])).toThrow(/starts itself again through its children \(a → b → c → b\)/);
  });

  it(`nesting deeper than ${MAX_SUB_AGENT_DEPTH} levels of child runs is refused, naming the chain; ${MAX_SUB_AGENT_DEPTH} are taken`, () => {
    const chain = (n: number) => Array.from({ length: n }, (_, i) => defineSubAgent(sub(`level${i + 1}`, { tools: [i + 1 < n ? `level${i + 2}` : 'list_files'] })));
    expect(() => new Toolset([...BUILTIN_TOOLS, ...chain(MAX_SUB_AGENT_DEPTH)])).not.toThrow();
    const deep = chain(MAX_SUB_AGENT_DEPTH + 1);
    expect(() => new Toolset([...BUILTIN_TOOLS, ...deep])).toThrow(
      `sub-agent tool level1: its sub-agents nest ${MAX_SUB_AGENT_DEPTH + 1} levels deep (level1 → level2 → level3 → level4), more than the ${MAX_SUB_AGENT_DEPTH} allowed (MAX_SUB_AGENT_DEPTH)`,
    );
    // A wide graph that nests within the bound (many sub-agents sharing children) is taken, and quickly.
    const leaves = Array.from({ length: 30 }, (_, i) => defineSubAgent(sub(`leaf${i}`, { tools: ['list_files'] })));
    const mids = Array.from({ length: 30 }, (_, i) => defineSubAgent(sub(`mid${i}`, { tools: leaves.map((l) => l.name) })));
    const tops = Array.from({ length: 30 }, (_, i) => defineSubAgent(sub(`top${i}`, { tools: mids.map((m) => m.name) })));
    expect(() => new Toolset([...BUILTIN_TOOLS, ...leaves, ...mids, ...tops])).not.toThrow();
  });
});

describe("a sub-agent's system prompt", () => {
  it.each([[''], ['   \n\t'], [null], [42], [['be brief']]])('%j is refused, naming subAgent.system', (system) => {
    refusedEverywhere(sub('delegate', { system }), /subAgent\.system must be a non-empty string \(leave it out for none\)/);
  });

  it(`one longer than ${MAX_SUB_AGENT_SYSTEM_CHARS} characters is refused, saying how long it is and the limit`, () => {
    refusedEverywhere(sub('delegate', { system: 'x'.repeat(MAX_SUB_AGENT_SYSTEM_CHARS + 1) }), new RegExp(`subAgent\\.system is ${MAX_SUB_AGENT_SYSTEM_CHARS + 1} characters, more than the ${MAX_SUB_AGENT_SYSTEM_CHARS} allowed`));
  });

  it('the longest allowed reaches the provider whole, on every request of the child', async () => {
    const system = `${'Answer from the files only. '.repeat(Math.floor(MAX_SUB_AGENT_SYSTEM_CHARS / 28))}`.slice(0, MAX_SUB_AGENT_SYSTEM_CHARS);
    const taskQueue = `sub-huge-${randomUUID().slice(0, 6)}`;
    const worker = await h.startWorker({ taskQueue, toolset: new Toolset([...BUILTIN_TOOLS, defineSubAgent(sub('delegate', { tools: ['list_files', 'read_file'], system, model: 'plan', limits: { maxUsd: 0.5 } }))]) });
    try {
      const m = marker();
      const task = `Delegate ${m}. script: ${JSON.stringify([[{ name: 'delegate', args: { q: `Which file mentions a timeout? ${m}` } }]])}`;
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `sub-huge-${randomUUID().slice(0, 8)}`, args: [{ task, model: 'script', tools: ['delegate'], limits: { maxTurns: 4, maxBudgetUsd: 2 } }] });
      h.track(handle.workflowId);
      expect(await handle.result()).toMatchObject({ status: 'completed', children: { runs: 1 } });
      const child = (await providerRequests(h.providerUrl, m)).filter((q) => q.model === 'plan');
      expect(child).toHaveLength(3);
      for (const q of child) expect(q.system).toBe(system);
    } finally {
      await worker.shutdown();
    }
  });
});

describe("a sub-agent's model name", () => {
  it.each([
    [''],
    ['   '],
    [' gpt-4o'],
    ['gpt-4o\n'],
    ['gpt\u00004o'],
    ['gpt-4o\r\nX-Injected: 1'],
    // A right-to-left override and a zero-width space: the name shown is not the name sent.
    ['gpt-\u202eo4'],
    ['gpt\u200b-4o'],
    ['m'.repeat(201)],
    [42],
    [null],
    [{ name: 'gpt-4o' }],
  ])('%j is refused, naming subAgent.model', (model) => {
    refusedEverywhere(sub('delegate', { model }), /subAgent\.model (must be|is \d+ characters)/);
  });

  it('real names with a provider prefix, a version, a tag or a region are taken', () => {
    for (const model of ['anthropic/claude-3-5-sonnet@20240620:beta', 'accounts/fireworks/models/llama-v3p1-70b-instruct', 'llama3.1:8b-instruct-q4_K_M', 'us.anthropic.claude-3-haiku-20240307-v1:0', 'gpt-4o-mini']) {
      expect(() => defineSubAgent(sub('delegate', { model }))).not.toThrow();
    }
  });

  it('a refusal of a huge name shows only its start, not the whole name', () => {
    expect(() => defineSubAgent(sub('delegate', { model: 'm'.repeat(100_000) }))).toThrow(/^defineSubAgent: tool delegate: subAgent\.model is 100000 characters, more than the 200 allowed \(MAX_MODEL_NAME_CHARS\): "m{80}"…$/);
  });
});

describe("a sub-agent spec's shape", () => {
  it.each([
    [{ systemPrompt: 'be brief' }, /subAgent has unknown field\(s\) systemPrompt \(it takes taskArgument, tools, system, model, limits\)/],
    [{ maxTurns: 3 }, /subAgent has unknown field\(s\) maxTurns/],
    [{ taskArgument: '' }, /subAgent\.taskArgument must name the argument/],
    [{ taskArgument: 3 }, /subAgent\.taskArgument must name the argument/],
  ])('%j is refused, naming the field', (spec, message) => {
    refusedEverywhere(sub('delegate', spec), message);
  });

  it('a subAgent that is not an object is refused', () => {
    for (const subAgent of [[], null]) {
      const def = { ...sub('delegate', {}), subAgent } as unknown as SubAgentDefinition;
      expect(() => defineSubAgent(def)).toThrow(/subAgent must be an object/);
    }
  });
});
