// Attacks through what a CALLER sizes (issue 33, item 4): numbers JSON cannot
// carry, inputs nested past any stack, and workflow ids that make file names
// too long. Driven through the real `temporal` CLI where the finding came
// from it, and the project's own CLI to read the trace back.
import { WorkflowFailedError } from '@temporalio/client';
import fc from 'fast-check';
import { ApplicationFailure } from '@temporalio/common';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TraceWriter } from '../../activities/trace-file.js';
import { sweepTraces } from '../../activities/trace-retention.js';
import type { WorkflowState } from '../../activities/workflow-state.js';
import { utf8Length } from '../../common/bounds.js';
import { InputError, inputShapeProblem } from '../../common/input.js';
import type { ExitStatus } from '../../common/contract.js';
import { propertyParams } from '../helpers/property.js';
import { statusQuery } from '../../common/run-messages.js';
import { AGENT_ERROR_TYPE, AGENT_STATUS } from '../../common/search-attributes.js';
import type { agentRun } from '../../workflows/index.js';
import { freshWorkspace, useHarness, waitFor } from '../helpers/harness.js';
import { temporalCli, temporalOk } from '../helpers/temporal-cli.js';
import { parseBuiltin } from '../helpers/builtin-specs.js';

const h = useHarness();
const exec = promisify(execFile);

/** Starts agentRun through `temporal workflow start --input` with this JSON text, verbatim. */
async function cliStart(input: string): Promise<string> {
  const id = `attack-input-${freshWorkspace()}`;
  await temporalOk(h.address, 'workflow', 'start', '--type', 'agentRun', '--task-queue', h.taskQueue, '--workflow-id', id, '--input', input);
  h.track(id);
  return id;
}

/** The run's failure as InvalidInput, at once (no workflow task failed or retried); its message. */
async function invalidInput(workflowId: string): Promise<string> {
  const handle = h.client.workflow.getHandle<typeof agentRun>(workflowId);
  const err = await handle.result().then(
    (r) => new Error(`the run was accepted and ended ${r.status}: ${r.error ?? r.output ?? ''}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause).toMatchObject({ type: 'InvalidInput', nonRetryable: true });
  expect(await handle.query(statusQuery)).toMatchObject({ status: 'failed', errorType: 'InvalidInput' });
  const attrs = (await handle.describe()).typedSearchAttributes;
  expect(attrs.get(AGENT_STATUS)).toBe('failed');
  expect(attrs.get(AGENT_ERROR_TYPE)).toBe('InvalidInput');
  const events = (await handle.fetchHistory()).events ?? [];
  expect(events.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
  // The trace says so too, in its one line.
  expect(h.events(workflowId)).toEqual([expect.objectContaining({ seq: 1, type: 'run_stopped', status: 'failed', errorType: 'InvalidInput', reason: cause?.message })]);
  return cause?.message ?? '';
}

describe('numbers JSON cannot carry', () => {
  it.each([
    ['limits.maxBudgetUsd', '{"task":"List the files.","model":"runaway","limits":{"maxTurns":3,"maxBudgetUsd":1e400}}'],
    ['approvalTimeoutMs', '{"task":"Delete the log.","model":"destructive","approvalTimeoutMs":1e400}'],
    ['limits.maxTurns', '{"task":"List the files.","model":"runaway","limits":{"maxTurns":1e400,"maxBudgetUsd":0.01}}'],
    ['budgetTimeoutMs', '{"task":"List the files.","model":"runaway","limits":{"budgetMode":"hard","maxBudgetUsd":0.01},"budgetTimeoutMs":-1e400}'],
  ])('%s: 1e400 through `temporal workflow start --input` is refused as InvalidInput naming the field (it arrived as null: no limit, an endless wait)', async (field, input) => {
    const message = await invalidInput(await cliStart(input));
    expect(message).toContain(`invalid input: ${field} must be a finite number, got ${input.includes('-1e400') ? '-Infinity' : 'Infinity'}`);
  });
});

describe('numbers an update carries', () => {
  it('raiseBudget to 1e400 through `temporal workflow update execute` is refused naming the field and Infinity (it said "got null"); the run stays parked, then takes a real raise', async () => {
    const id = await cliStart(JSON.stringify({ task: 'Which file mentions a timeout?', model: 'plan', limits: { maxTurns: 10, maxBudgetUsd: 0.004, budgetMode: 'hard', minReplyTokens: 256 } }));
    const handle = h.client.workflow.getHandle<typeof agentRun>(id);
    await waitFor('the run to park on its budget', async () => ((await handle.query(statusQuery)).agentStatus === 'awaiting_budget' ? true : null));
    const refused = await temporalCli(h.address, 'workflow', 'update', 'execute', '--workflow-id', id, '--name', 'raiseBudget', '--input', '{"maxBudgetUsd":1e400,"by":"alice"}');
    expect(refused.code).not.toBe(0);
    expect(`${refused.stderr}${refused.stdout}`).toContain('maxBudgetUsd must be a finite number, got Infinity');
    expect(await handle.query(statusQuery)).toMatchObject({ agentStatus: 'awaiting_budget', budget: { maxBudgetUsd: 0.004 } });
    await temporalOk(h.address, 'workflow', 'update', 'execute', '--workflow-id', id, '--name', 'raiseBudget', '--input', '{"maxBudgetUsd":0.02,"by":"alice"}');
    expect(await handle.result()).toMatchObject({ status: 'completed' });
  });
});

describe('inputs nested past any stack', () => {
  it('a start input nested 5,000 deep is refused as InvalidInput naming the field and the limit, at once', async () => {
    // 5,000: the `temporal` CLI's own JSON check stops at 10,000.
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const message = await invalidInput(await cliStart(`{"task":"List the files.","tools":[${deep}]}`));
    expect(message).toMatch(/^invalid input: tools(\[0\])+ is nested more than 64 levels deep; the limit is 64$/);
  });
});

describe('file names made from workflow ids', () => {
  const bin = join(import.meta.dirname, '..', '..', 'bin', 'agent-harness.mjs');
  const env = () => ({ ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir });

  it.each([
    ['a 27-character Japanese id', `注文の処理を今すぐ開始してください一二三四五六七八九十`],
    ['a 240-character ASCII id', `orders-${'x'.repeat(233)}`],
  ])('%s: the run completes, its trace file name fits, and `agent-harness trace <id>` reads it (ENAMETOOLONG failed the run after its first turn)', async (_label, id) => {
    expect([...id].length === 27 || id.length === 240).toBe(true);
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan' }, id);
    const r = await handle.result();
    expect(r.status).toBe('completed');
    const files = readdirSync(h.traceDir).filter((f) => f.endsWith(`.${handle.firstExecutionRunId}.jsonl`));
    expect(files).toHaveLength(1);
    expect(utf8Length(files[0])).toBeLessThanOrEqual(255);
    expect(h.events(id).at(-1)).toMatchObject({ type: 'run_stopped', status: 'completed', workflowId: id });
    const printed = await exec(bin, ['trace', id], { env: env(), timeout: 60_000 });
    expect(printed.stdout).toContain('"type":"run_stopped"');
    expect(printed.stdout).toContain(JSON.stringify(id));
  });

  it('a short plain-ASCII id keeps its readable trace file name', async () => {
    const id = `orders-${freshWorkspace()}`;
    const handle = await h.start({ task: 'Which file mentions a timeout?', model: 'plan' }, id);
    await handle.result();
    expect(readdirSync(h.traceDir)).toContain(`${id}.${handle.firstExecutionRunId}.jsonl`);
  });
});

describe('retention of hashed trace files', () => {
  it("asks the server about the workflow id written inside, not the hash in the name: a running run's trace stays", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attack-trace-'));
    const id = '注文の処理を今すぐ開始してください一二三四五六七八九十';
    const chain = '01a244f9-58b7-78da-a74e-381e465233a3';
    new TraceWriter(dir, 'default').write(id, chain, { seq: 1, type: 'run_started' });
    const [name] = readdirSync(dir);
    expect(name).toMatch(/^_+\+[0-9a-f]{32}\.01a244f9-58b7-78da-a74e-381e465233a3\.jsonl$/);
    // Old enough for the sweep to ask about it.
    utimesSync(join(dir, name), new Date(0), new Date(0));
    const asked: string[] = [];
    const stateOf = async (workflowId: string): Promise<WorkflowState> => {
      asked.push(workflowId);
      return workflowId === id ? { running: true } : { running: false, closedAt: null };
    };
    const swept = await sweepTraces(dir, stateOf, { maxAgeMs: 1000, maxBytes: null, namespace: 'default', namespaceRetentionMs: null });
    expect(asked).toEqual([id]);
    expect(swept).toMatchObject({ removed: 0, keptInFlight: 1 });
    expect(readdirSync(dir)).toEqual([name]);
  });
});

/** A field of the input and a hostile value for it, as JSON text (so 1e400 can be written). */
const FIELDS = ['limits.maxTurns', 'limits.maxBudgetUsd', 'approvalTimeoutMs', 'modelTimeoutMs', 'toolTimeoutMs', 'maxToolResultChars', 'continueAsNewAtHistoryBytes', 'pricing.inputPerMTokUsd', 'context.windowTokens', 'model', 'system', 'workspace', 'tools', 'toolErrors', 'forkFrom'] as const;
const hostileText = fc.oneof(
  fc.constantFrom('1e400', '-1e400', '1e308', 'null', '0', '-1', '2.5', '15', '0.05', 'true', '"x"', '[]', '{}', '""'),
  fc.integer({ min: 1, max: 6000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.string({ maxLength: 3000 }).map((t) => JSON.stringify(t)),
  fc.json({ maxDepth: 3 }),
);
const hostileInput = fc.array(fc.tuple(fc.constantFrom(...FIELDS), hostileText), { maxLength: 3 }).map((fields) => {
  const top: Record<string, string[]> = {};
  const nested: Record<string, Record<string, string>> = {};
  for (const [field, value] of fields) {
    const [head, tail] = field.split('.');
    if (tail === undefined) top[head] = [value];
    else (nested[head] ??= {})[tail] = value;
  }
  const parts = ['"task":"Which file mentions a timeout?"', '"model":"plan"'].filter((p) => !(p.startsWith('"model"') && top.model));
  for (const [k, [v]] of Object.entries(top)) parts.push(`${JSON.stringify(k)}:${v}`);
  for (const [k, inner] of Object.entries(nested)) parts.push(`${JSON.stringify(k)}:{${Object.entries(inner).map(([ik, iv]) => `${JSON.stringify(ik)}:${iv}`).join(',')}}`);
  return `{${parts.join(',')}}`;
});

/** What parseInput makes of an input: its configuration, or the field it refuses. Anything else thrown fails the property. */
function outcome(input: unknown): unknown {
  try {
    return { cfg: parseBuiltin(input) };
  } catch (err) {
    if (err instanceof InputError) return { field: err.field, message: err.message };
    throw err;
  }
}

describe('any start input (properties)', () => {
  it('the workflow refuses what the next encoding would change: an input that passes its check resolves the same after JSON encoding (1e400 became null: no limit)', () => {
    fc.assert(
      fc.property(hostileInput, (text) => {
        const input: unknown = JSON.parse(text);
        const shape = inputShapeProblem(input);
        if (shape) {
          expect(shape.field).not.toBe('');
          return;
        }
        // What the local activity that resolves the input receives.
        const encoded: unknown = JSON.parse(JSON.stringify(input));
        expect(outcome(encoded)).toEqual(outcome(input));
      }),
      propertyParams(300),
    );
  });

  it('through `temporal workflow start --input`: each run fails at once as InvalidInput naming a field, or ends in one of the five exits; no workflow task fails', { timeout: 240_000 }, async () => {
    const EXITS: readonly ExitStatus[] = ['completed', 'failed', 'max_turns_exceeded', 'budget_exceeded', 'interrupted'];
    const runs = Number(process.env.ATTACK_INPUT_RUNS ?? 6);
    const texts = fc.sample(hostileInput, { numRuns: runs, ...(process.env.PROPERTY_SEED ? { seed: Number(process.env.PROPERTY_SEED) } : {}) });
    for (const text of texts) {
      const id = await cliStart(text);
      const handle = h.client.workflow.getHandle<typeof agentRun>(id);
      const ended = await handle.result().then(
        (r) => ({ status: r.status as string }),
        (e: unknown) => ({ status: 'workflow failed', cause: e instanceof WorkflowFailedError ? e.cause : e }),
      );
      if (ended.status === 'workflow failed') {
        expect(ended, text.slice(0, 300)).toMatchObject({ cause: { type: 'InvalidInput', nonRetryable: true } });
      } else {
        expect(EXITS, text.slice(0, 300)).toContain(ended.status);
      }
      expect(h.events(id).at(-1), text.slice(0, 300)).toMatchObject({ type: 'run_stopped' });
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.some((e) => e.workflowTaskFailedEventAttributes), text.slice(0, 300)).toBe(false);
    }
  });
});
