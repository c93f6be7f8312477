// Attacks through what the MODEL sizes (issue 33, item 4): call ids, argument
// nesting, and everything they reach — search attributes, a child's workflow
// id, the trace's file name. Each ran a run out of the five exits before: the
// server terminated it, or every workflow task failed or timed out. Now each
// ends in an exit with a reason naming the limit, and a run_stopped line.
import { WorkflowFailedError } from '@temporalio/client';
import fc from 'fast-check';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../activities/tools/builtin.js';
import { defineTool } from '../../activities/tools/define-tool.js';
import { Toolset } from '../../activities/tools/toolset.js';
import { canonicalJson } from '../../common/args-hash.js';
import { MAX_CALL_ID_CHARS, utf8Length } from '../../common/bounds.js';
import type { ChatMessage, ExitStatus, ModelReply, RunResult, ToolCall } from '../../common/contract.js';
import { transcriptQuery } from '../../common/run-messages.js';
import { AGENT_EXIT_REASON, AGENT_MODEL, AGENT_PARENT, AGENT_STATUS } from '../../common/search-attributes.js';
import { takeReply } from '../../workflows/next-step.js';
import { initialState } from '../../workflows/run-state.js';
import { MAX_ARGUMENT_DEPTH, parseCall, subAgentChildId } from '../../workflows/tool-calls.js';
import { nestingDepth } from '../../common/json-depth.js';
import { statusAttributes } from '../../workflows/visibility.js';
import { parseBuiltin, specs } from '../helpers/builtin-specs.js';
import { propertyParams } from '../helpers/property.js';
import type { agentRun } from '../../workflows/index.js';
import { useHarness } from '../helpers/harness.js';

const h = useHarness();

/** The run's result; a run the server terminated (or that failed as a workflow) is an error naming how it ended. */
async function resultOf(workflowId: string): Promise<RunResult> {
  try {
    return await h.client.workflow.getHandle<typeof agentRun>(workflowId).result();
  } catch (err) {
    if (err instanceof WorkflowFailedError) throw new Error(`the run ended outside the five exits: ${err.message} (${err.cause?.message ?? ''})`);
    throw err;
  }
}

const toolResults = (t: ChatMessage[]) => t.flatMap((m) => (m.role === 'tool' ? [m] : []));

describe('call ids the model sizes', () => {
  it('a 5,001-character call id ends the run failed naming the limit (it was terminated by the server: a search attribute over 2 KiB)', async () => {
    const handle = await h.start({ task: 'List the files.', model: 'long_call_id' });
    const r = await resultOf(handle.workflowId);
    expect(r).toMatchObject({ status: 'failed', errorType: 'ProtocolError', toolRuns: 0 });
    expect(r.error).toContain(`tool call id of 5001 characters`);
    expect(r.error).toContain(`at most ${MAX_CALL_ID_CHARS} characters`);
    // The reason quotes the id cut, not whole.
    expect(r.error?.length).toBeLessThan(400);
    expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'failed' });
    const attrs = (await handle.describe()).typedSearchAttributes;
    expect(attrs.get(AGENT_STATUS)).toBe('failed');
    expect(attrs.get(AGENT_EXIT_REASON)).toContain('at most 128 characters');
  });

  it('a call id with control characters ends the run failed naming them, before any tool runs', async () => {
    const handle = await h.start({ task: 'List the files.', model: 'control_call_id' });
    const r = await resultOf(handle.workflowId);
    expect(r).toMatchObject({ status: 'failed', errorType: 'ProtocolError', toolRuns: 0 });
    expect(r.error).toContain('tool call id with control characters');
    expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'failed' });
  });

  it('a 1,101-character call id on `research` ends the run failed before any child starts (its id failed every workflow task)', async () => {
    const handle = await h.start({ task: 'Find out which file mentions a timeout.', model: 'research_long_id', tools: ['research', 'list_files', 'read_file'] });
    const r = await resultOf(handle.workflowId);
    expect(r).toMatchObject({ status: 'failed', errorType: 'ProtocolError', toolRuns: 0, children: { runs: 0 } });
    expect(r.error).toContain('tool call id of 1101 characters');
    expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'failed' });
  });

  it('a parent whose own workflow id is long (950 characters) still starts its `research` child: the child id is cut and hashed under the server limit', async () => {
    const parentId = `long-parent-${'p'.repeat(950 - 'long-parent-'.length)}`;
    const handle = await h.start({ task: 'Find out which file mentions a timeout.', model: 'research', tools: ['research'] }, parentId);
    const r = await resultOf(handle.workflowId);
    expect(r).toMatchObject({ status: 'completed', children: { runs: 1 } });
    expect(r.output).toContain('errors.log mentions a timeout');
    // The child: found by its parent, its id under the server's 1,000 bytes and ending in the tool's name.
    const children: string[] = [];
    for await (const w of h.client.workflow.list({ query: `AgentParent = ${JSON.stringify(parentId)}` })) children.push(w.workflowId);
    expect(children).toHaveLength(1);
    const [childId] = children;
    expect(utf8Length(childId)).toBeLessThanOrEqual(800);
    expect(childId).toMatch(/^long-parent-p+…#[0-9a-f]{32}\/research$/);
    expect((await h.client.workflow.getHandle(childId).describe()).typedSearchAttributes.get(AGENT_PARENT)).toBe(parentId);
    // Both traces are written (a 950-character id made a file name past 255 bytes) and read by their workflow ids.
    expect(h.events(parentId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed' });
    expect(h.events(childId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed' });
  });
});

describe('values the model nests', () => {
  it('canonical JSON of a value nested 5,000 deep returns (the recursive walk overflowed the stack)', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect(canonicalJson({ value: deep })).toBe(`{"value":${'['.repeat(5000)}1${']'.repeat(5000)}}`);
    // And the same text as before for what a model really sends.
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: true })).toBe('{"a":true,"b":[1,{"c":"x","d":null}]}');
  });

  it(`arguments nested 5,000 deep for a tool that takes any value: a tool error naming the limit of ${MAX_ARGUMENT_DEPTH}, and the run goes on (every workflow task timed out)`, async () => {
    let kept = 0;
    const keepValue = defineTool({
      name: 'keep_value',
      description: 'Keeps any JSON value.',
      parameters: { type: 'object', properties: { value: {} }, required: ['value'] },
      readOnly: true,
      run: async () => `kept ${++kept}`,
    });
    const worker = await h.startWorker({ taskQueue: `${h.taskQueue}-deep`, toolset: new Toolset([...BUILTIN_TOOLS, keepValue]) });
    try {
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue: worker.taskQueue,
        workflowId: `deep-args-${Date.now()}`,
        args: [{ task: 'Keep this value.', model: 'deep_args', tools: ['keep_value'] }],
      });
      const r = await resultOf(handle.workflowId);
      expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 0 });
      const [result] = toolResults(await handle.query(transcriptQuery));
      expect(result.content).toContain(`the arguments of keep_value are nested more than ${MAX_ARGUMENT_DEPTH} levels deep; the limit is ${MAX_ARGUMENT_DEPTH}`);
      expect(kept).toBe(0);
      expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed' });
    } finally {
      await worker.shutdown();
    }
  });
});

describe('arguments a provider sends as an object', () => {
  it('nested 7,000 deep in 14 KB (JSON.stringify overflows): the model call still returns, and the call is refused for its depth (the model call failed and was retried as an outage)', async () => {
    // A provider of its own over real HTTP: the scripted one always sends arguments as text.
    // Its body is written by hand: JSON.stringify cannot encode it either.
    const deep = `{"value":${'['.repeat(7000)}${']'.repeat(7000)}}`;
    const usage = '"usage":{"prompt_tokens":10,"completion_tokens":5}';
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const asked = (JSON.parse(body) as { messages: { role: string; content?: string }[] }).messages;
        const told = asked.find((m) => m.role === 'tool')?.content;
        const message = told === undefined
          ? `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"list_files","arguments":${deep}}}]}`
          : JSON.stringify({ role: 'assistant', content: `The tool said: ${told}` });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":${message},"finish_reason":"${told === undefined ? 'tool_calls' : 'stop'}"}],${usage}}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const worker = await h.startWorker({ taskQueue: `${h.taskQueue}-objargs`, llmBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
    try {
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
        taskQueue: worker.taskQueue,
        workflowId: `object-args-${Date.now()}`,
        args: [{ task: 'List the files.', model: 'plan', modelOutageMs: 5000 }],
      });
      const r = await resultOf(handle.workflowId);
      expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 0 });
      expect(r.output).toContain(`the arguments of list_files are nested more than ${MAX_ARGUMENT_DEPTH} levels deep`);
    } finally {
      await worker.shutdown();
      server.close();
    }
  });
});

describe('what a caller names, shown in search attributes', () => {
  it('a 3,000-character model name ends the run in an exit, its AgentModel cut under the server limit (the upsert got the run terminated)', async () => {
    const model = `m${'x'.repeat(2999)}`;
    // No USD budget: an unpriced model under one is refused at start (below); this run reaches its upsert.
    const handle = await h.start({ task: 'List the files.', model, limits: { maxBudgetUsd: null } }, `long-model-${Date.now()}`);
    const r = await resultOf(handle.workflowId);
    expect(r.status).toBe('failed');
    expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'failed' });
    const shown = (await handle.describe()).typedSearchAttributes.get(AGENT_MODEL) ?? '';
    expect(utf8Length(shown)).toBeLessThanOrEqual(1000);
    expect(shown.startsWith('mxxx')).toBe(true);
  });

  it('a 3,000-character unpriced model under a USD budget is refused at start, the name cut in the error', async () => {
    const handle = await h.start({ task: 'List the files.', model: `m${'x'.repeat(2999)}` }, `long-model-priced-${Date.now()}`);
    const err = await handle.result().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const message = (err as WorkflowFailedError).cause?.message ?? '';
    expect(message).toContain('has no price');
    expect(message).toContain('(3000 characters)');
    expect(message.length).toBeLessThan(800);
  });
});

describe('any reply a model can send (property, workflow code without a server)', () => {
  const EXITS: readonly ExitStatus[] = ['completed', 'failed', 'max_turns_exceeded', 'budget_exceeded', 'interrupted'];
  const anySpec = { name: 'keep_value', description: 'Keeps any JSON value.', parameters: { type: 'object', properties: { value: {} } }, readOnly: true };
  const enabled = [...specs('list_files', 'read_file', 'delete_file'), anySpec] as Parameters<typeof parseCall>[1];
  const cfg = parseBuiltin({ task: 't', model: 'm'.repeat(3000) });
  const nested = (n: number, open: string, close: string) => `{"value":${open.repeat(n)}${close.repeat(n)}}`;
  const callId = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ minLength: 100, maxLength: 6000 }),
    fc.string({ unit: 'grapheme', maxLength: 300 }),
    fc.constantFrom('', 'c1', 'c1\u0000', 'c1\n', '\u2028', 'r1/../research', '注文'.repeat(40)),
  );
  const args = fc.oneof(
    fc.json({ maxDepth: 4 }),
    fc.integer({ min: 0, max: 8000 }).map((n) => nested(n, '[', ']')),
    fc.integer({ min: 0, max: 5000 }).map((n) => nested(n, '{"a":', '}')),
    fc.string({ maxLength: 200 }),
    fc.constant('x'.repeat(20_000)),
  );
  const call = fc.record({ id: callId, name: fc.oneof(fc.constantFrom('list_files', 'read_file', 'delete_file', 'keep_value', 'research'), fc.string({ maxLength: 3000 })), arguments: args });
  const reply = fc.array(call, { minLength: 0, maxLength: 3 }).map((calls): ModelReply => ({
    message: { role: 'assistant', content: calls.length ? null : 'done', ...(calls.length ? { tool_calls: calls.map((c): ToolCall => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}) },
    usage: { promptTokens: 10, completionTokens: 5 },
    finishReason: calls.length ? 'tool_calls' : 'stop',
  }));

  it('ends the run in one of the five exits or yields calls whose every size is bounded; nothing throws', () => {
    const bytes = (v: unknown) => (typeof v === 'string' ? utf8Length(v) : 0);
    fc.assert(
      fc.property(reply, (r) => {
        const s = initialState(cfg);
        const exit = takeReply(s, r, cfg.pricing);
        if (exit) {
          expect(EXITS).toContain(exit.status);
          expect(utf8Length(exit.reason)).toBeLessThan(2000);
          return;
        }
        const calls = r.message.tool_calls ?? [];
        for (const [i, c] of calls.entries()) {
          expect(c.id.length).toBeLessThanOrEqual(MAX_CALL_ID_CHARS);
          const parsed = parseCall(c, enabled);
          if (parsed.ok) {
            expect(nestingDepth(parsed.args, MAX_ARGUMENT_DEPTH)).toBeLessThanOrEqual(MAX_ARGUMENT_DEPTH);
            canonicalJson(parsed.args);
            JSON.stringify(parsed.args);
          } else {
            expect(parsed.error.length).toBeLessThan(2000);
          }
          // Parked on it, and ended after it: every attribute the server would take; a child id it would take.
          const interruption = { type: 'approval' as const, callId: c.id, toolName: c.function.name.slice(0, 64), args: parsed.ok ? parsed.args : {}, argsHash: 'a'.repeat(64) };
          const parent = `p${'x'.repeat(998)}`;
          for (const attrs of [
            statusAttributes({ cfg, state: s, status: 'interrupted', interruption }, undefined, parent),
            statusAttributes({ cfg, state: s, status: 'failed', interruption: null }, { status: 'failed', interruption: null, reason: `${c.id} ${c.function.name} ${'語'.repeat(1000)}`, error: '', errorType: c.function.name }, parent),
          ]) {
            for (const a of attrs) expect(bytes(a.value), a.key.name).toBeLessThanOrEqual(2048);
          }
          expect(utf8Length(subAgentChildId(parent, { call: c, messageIndex: 2 * i + 2 }, 'research'))).toBeLessThanOrEqual(1000);
        }
      }),
      propertyParams(200),
    );
  });
});
