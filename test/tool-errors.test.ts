// Tool errors are data; their wording is policy. Errors the model cannot act
// on stop the run with a reason instead of burning turns.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { transcriptQuery } from '../common/run-messages.js';
import { useHarness } from './helpers/harness.js';

const h = useHarness();
const task = 'Which file mentions a timeout?';

describe('recover scenario under the three policies', () => {
  it('fatal: the run fails on the first tool error, naming it', async () => {
    const r = await h.run({ task, model: 'recover', toolErrors: 'fatal' });
    expect(r.status).toBe('failed');
    expect(r.error).toContain('no such file: timeout.log');
    expect(r.turns).toBe(1);
  });

  it('generic: the model is told only that something failed, and gives up politely', async () => {
    const handle = await h.start({ task, model: 'recover', toolErrors: 'generic' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: 'I could not read the file, so I do not know.', turns: 2 });
    const transcript = await handle.query(transcriptQuery);
    expect(transcript[2]).toMatchObject({ role: 'tool', content: 'Error: the tool failed.' });
  });

  it('describe: the model reads the error, recovers, answers, and costs several times more', async () => {
    const fatal = await h.run({ task, model: 'recover', toolErrors: 'fatal' });
    const handle = await h.start({ task, model: 'recover', toolErrors: 'describe' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: 'errors.log mentions a timeout.', turns: 4, toolRuns: 3 });
    const transcript = await handle.query(transcriptQuery);
    expect(transcript[2]).toMatchObject({
      role: 'tool',
      content: 'Error: no such file: timeout.log. Call list_files to see what exists.',
    });
    expect(r.costUsd / fatal.costUsd).toBeGreaterThan(3);
  });
});

describe('forbidden scenario', () => {
  it('stops at the first policy refusal with a reason, long before the turn cap', async () => {
    const handle = await h.start({ task, model: 'forbidden', limits: { maxTurns: 12 } });
    const r = await handle.result();
    expect(r.status).toBe('failed');
    expect(r.turns).toBe(1);
    expect(r.toolRuns).toBe(1);
    expect(r.error).toMatch(/permanent tool error in read_file.*access denied.*\.env/);
    expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', status: 'failed' });
    // The transcript stays valid: the refused call got its result.
    const transcript = await handle.query(transcriptQuery);
    expect(transcript.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
  });
});

describe('forbidden with the experiment permanentToolErrors: retry (the chapter\'s loop, kept to reproduce it)', () => {
  it('the model retries the refused read until the turn cap, with nothing to show', async () => {
    const id = h.experiments.set(`forbidden-retry-${randomUUID().slice(0, 8)}`, { permanentToolErrors: 'retry' });
    const r = await (await h.start({ task, model: 'forbidden', limits: { maxTurns: 12 } }, id)).result();
    expect(r).toMatchObject({ status: 'max_turns_exceeded', turns: 12, toolRuns: 12, output: null });
  });
});

describe('protocol breaks in a reply', () => {
  it.each([
    ['missing_call', /without an id/],
    ['missing_result', /reused tool call id "c1"/],
  ])('%s: the reply is refused before it can break the transcript', async (model, why) => {
    const handle = await h.start({ task, model });
    const r = await handle.result();
    expect(r.status).toBe('failed');
    expect(r.error).toMatch(why);
    // The reply was paid for, so it is counted; it was not recorded.
    expect(r.turns).toBe(1);
    expect(r.costUsd).toBeGreaterThan(0);
    expect((await handle.query(transcriptQuery)).map((m) => m.role)).toEqual(['user']);
  });
});
