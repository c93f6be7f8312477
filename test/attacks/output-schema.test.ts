// Hostile inputs to the new surfaces outputSchema, maxOutputRetries and
// modelSettings, and a hostile model under an outputSchema. A schema the
// validator would recurse on forever ($ref loops) overflowed the workflow's
// stack on the model's first answer (a workflow task failing again and
// again); a schema or providerOptions of any size travelled with every model
// call; a 1 MB JSON answer went twice into a result payload. Each is now
// refused at start (InvalidInput naming the field and the limit) or ends the
// run in one of the five exits with a reason naming the limit.
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_DEFAULTS } from '../../common/defaults.js';
import { InputError, parseInput } from '../../common/input.js';
import { MAX_PROVIDER_OPTIONS_BYTES } from '../../common/model-settings.js';
import { checkAnswer, MAX_OUTPUT_SCHEMA_BYTES, MAX_OUTPUT_SCHEMA_DEPTH, MAX_STRUCTURED_ANSWER_CHARS, outputSchemaProblem } from '../../common/output-schema.js';
import type { AgentInput } from '../../common/contract.js';
import { statusQuery } from '../../common/run-messages.js';
import { BUILTIN_SPECS } from '../helpers/builtin-specs.js';
import { useHarness } from '../helpers/harness.js';

const h = useHarness();

/** The run refused at start: InvalidInput, non-retryable, its message. */
async function refused(input: unknown): Promise<string> {
  const handle = await h.start(input as AgentInput);
  const err = await handle.result().then(
    (r) => new Error(`accepted, ended ${r.status}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause).toMatchObject({ type: 'InvalidInput', nonRetryable: true });
  expect(await handle.query(statusQuery)).toMatchObject({ status: 'failed', errorType: 'InvalidInput', turns: 0 });
  return (cause as ApplicationFailure).message;
}

/** The field and message parseInput refuses `input` with (the same check the workflow's start runs). */
function refusal(input: Record<string, unknown>): { field: string; message: string } {
  try {
    parseInput({ task: 't', ...input }, BUILT_IN_DEFAULTS, BUILTIN_SPECS);
  } catch (err) {
    if (err instanceof InputError) return { field: err.field, message: err.message };
    throw err;
  }
  throw new Error('accepted');
}

const nested = (levels: number): Record<string, unknown> => {
  let s: Record<string, unknown> = { type: 'string' };
  for (let i = 1; i < levels; i++) s = { type: 'array', items: s };
  return s;
};

describe('outputSchema refused at start, naming it', () => {
  it('$ref loops that never reach the value: the run is refused before the model is asked (it overflowed the workflow stack on the first answer)', async () => {
    expect(await refused({ task: 't', model: 'structured', outputSchema: { $ref: '#' } })).toMatch(/outputSchema.*reference loop/);
    for (const schema of [
      { allOf: [{ $ref: '#' }] },
      { $defs: { a: { $ref: '#/$defs/b' }, b: { anyOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' },
      { type: 'object', properties: { x: { $ref: '#/$defs/x' } }, $defs: { x: { not: { $ref: '#/$defs/x' } } } },
    ]) {
      expect(refusal({ outputSchema: schema })).toMatchObject({ field: 'outputSchema', message: expect.stringContaining('reference loop') });
    }
    // A recursive schema that consumes the value at each step is fine: a tree of nodes.
    expect(outputSchemaProblem({ type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } } })).toBeNull();
  });

  it('a remote or dangling $ref, $id / $dynamicRef, and a pattern that backtracks without end are refused', () => {
    expect(refusal({ outputSchema: { $ref: 'https://example.com/schema.json' } }).message).toContain('only local references');
    expect(refusal({ outputSchema: { $ref: '#/$defs/missing' } }).message).toContain('points at no schema');
    expect(refusal({ outputSchema: { $id: 'https://x', type: 'object' } }).message).toContain('"$id"');
    expect(refusal({ outputSchema: { $dynamicRef: '#meta' } }).message).toContain('"$dynamicRef"');
    expect(refusal({ outputSchema: { type: 'string', pattern: '^(a+)+$' } }).message).toContain('nested repetition');
    expect(refusal({ outputSchema: { type: 'string', pattern: '([' } }).message).toContain('not a regular expression');
  });

  it('a huge or deep schema is refused naming the limit; a non-object is refused', async () => {
    const huge = { type: 'object', description: 'x'.repeat(MAX_OUTPUT_SCHEMA_BYTES) };
    expect(await refused({ task: 't', outputSchema: huge })).toContain(`the limit is ${MAX_OUTPUT_SCHEMA_BYTES}`);
    expect(refusal({ outputSchema: nested(MAX_OUTPUT_SCHEMA_DEPTH + 1) })).toMatchObject({ field: 'outputSchema', message: expect.stringContaining(`more than ${MAX_OUTPUT_SCHEMA_DEPTH} levels`) });
    expect(outputSchemaProblem(nested(MAX_OUTPUT_SCHEMA_DEPTH))).toBeNull();
    for (const v of ['object', ['type', 'object'], null, 42]) expect(refusal({ outputSchema: v })).toMatchObject({ field: 'outputSchema', message: expect.stringContaining('must be a JSON Schema object') });
  });

  it('maxOutputRetries: only with outputSchema, an integer 0..10', () => {
    expect(refusal({ maxOutputRetries: 1 })).toMatchObject({ field: 'maxOutputRetries', message: expect.stringContaining('maxOutputRetries applies only with outputSchema') });
    expect(refusal({ outputSchema: { type: 'object' }, maxOutputRetries: 1000 })).toMatchObject({ field: 'maxOutputRetries', message: expect.stringContaining('between 0 and 10') });
    expect(refusal({ outputSchema: { type: 'object' }, maxOutputRetries: 'many' }).field).toBe('maxOutputRetries');
  });
});

describe('modelSettings refused at start, naming the setting', () => {
  it('temperature "hot", toolChoice "sometimes", a 100 KiB providerOptions', async () => {
    expect(await refused({ task: 't', modelSettings: { temperature: 'hot' } })).toMatch(/modelSettings\.temperature must be a number between 0 and 2, got "hot"/);
    expect(await refused({ task: 't', modelSettings: { toolChoice: 'sometimes' } })).toMatch(/modelSettings\.toolChoice must be one of auto \| required \| none, got "sometimes"/);
    const big = { anthropic: { cacheControl: 'x'.repeat(100 * 1024) } };
    expect(await refused({ task: 't', modelSettings: { providerOptions: big } })).toMatch(new RegExp(`modelSettings\\.providerOptions is \\d+ bytes as JSON; the limit is ${MAX_PROVIDER_OPTIONS_BYTES}`));
  });

  it('every other setting out of range, and a misspelt one, is named', () => {
    expect(refusal({ modelSettings: { temperature: 3 } }).field).toBe('modelSettings.temperature');
    expect(refusal({ modelSettings: { topP: 0 } }).field).toBe('modelSettings.topP');
    expect(refusal({ modelSettings: { maxOutputTokens: 1.5 } }).field).toBe('modelSettings.maxOutputTokens');
    expect(refusal({ modelSettings: { stopSequences: 'END' } }).field).toBe('modelSettings.stopSequences');
    expect(refusal({ modelSettings: { stopSequences: Array.from({ length: 17 }, (_, i) => `s${i}`) } }).message).toContain('at most 16');
    expect(refusal({ modelSettings: { seed: 0.5 } }).field).toBe('modelSettings.seed');
    expect(refusal({ modelSettings: { providerOptions: { anthropic: 'thinking' } } }).field).toBe('modelSettings.providerOptions.anthropic');
    expect(refusal({ modelSettings: { temprature: 0.2 } })).toMatchObject({ field: 'modelSettings.temprature', message: expect.stringContaining('known: temperature') });
    expect(refusal({ modelSettings: 'fast' }).field).toBe('modelSettings');
  });
});

describe('a hostile model under an outputSchema', () => {
  it('a 1 MB JSON answer is a miss naming the limit, never a 2 MB result: the run ends failed InvalidOutput', async () => {
    const r = await h.run({ task: 'Which file?', model: 'huge_json', outputSchema: { type: 'object' }, maxOutputRetries: 0 });
    expect(r).toMatchObject({ status: 'failed', errorType: 'InvalidOutput', turns: 1 });
    expect(r.error).toContain(`a structured answer may be at most ${MAX_STRUCTURED_ANSWER_CHARS}`);
    expect(r).not.toHaveProperty('structuredOutput');
  });

  it('with retries left, answers that keep coming at 1 MB end the run in an exit (the transcript bound), not a stuck workflow', async () => {
    // No budget (a 1 MB answer costs dollars): the transcript's own bound is what stops it.
    const r = await h.run({ task: 'Which file?', model: 'huge_json', outputSchema: { type: 'object' }, limits: { maxTurns: 5, maxBudgetUsd: null } });
    expect(r.status).toBe('failed');
    expect(['InvalidOutput', 'TranscriptTooLarge']).toContain(r.errorType);
  });

  it('an answer nested past the bound, or not JSON, is a miss in words, not a crash', () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    expect(checkAnswer({ type: 'array' }, deep)).toMatchObject({ ok: false, problem: expect.stringContaining('nested more than 64 levels') });
    expect(checkAnswer({ type: 'object' }, 'Sure! {"a": 1}')).toMatchObject({ ok: false, problem: expect.stringContaining('not JSON') });
    // A fenced block is read as its inside; prose around a fence is not.
    expect(checkAnswer({ type: 'object' }, '```json\n{"a": 1}\n```')).toEqual({ ok: true, value: { a: 1 } });
    expect(checkAnswer({ type: 'object' }, 'Here:\n```json\n{"a": 1}\n```')).toMatchObject({ ok: false });
  });
});
