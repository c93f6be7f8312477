// Determinism and sameness: every saved history (one generation, recorded by
// the current code with `npm run fixtures:record`) replays on the workflow
// code, and on replay the code asks for the same activities with the same
// inputs and ends the same way (result, continue-as-new input, failure) as the
// history recorded. A change to the loop that would alter what runs record
// fails here: it ships as a new pinned build and the histories are recorded
// again (see "Changing the loop safely" in docs/internals.md).
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { dataConverter } from '../node/payload-codec.js';
import { REPLAY_SINKS } from '../worker/create-worker.js';
import type { RunResult } from '../common/contract.js';
import type { RunToolInput } from '../common/activity-contract.js';
import { bundleWith } from './replay/bundle.js';
import { CAPTURE_MODULE, describeDifference, differences, recorded, replayed } from './replay/compare.js';
import { ACCEPTED_DIFFERENCES, acceptedFor, type AcceptedDifference } from './replay/accepted-differences.js';

const DIR = join(import.meta.dirname, 'fixtures', 'histories');
const files = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();
/** The fixtures the recording script records (its cases' names, read from its source: importing it would run it). */
const RECORDED = [...readFileSync(join(import.meta.dirname, 'fixtures', 'record-histories.ts'), 'utf8').matchAll(/^ {2}\['([a-z0-9-]+)',/gm)].map((m) => `${m[1]}.json`).sort();
const load = (file: string) => historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
const workflowIdOf = (file: string) => `fixture-${file.replace(/\.json$/, '')}`;

/** The workflows with the capture interceptors (they add no command): what the code asks for on replay. */
let capturing: WorkflowBundle;
const used = new Set<AcceptedDifference>();

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  capturing = await bundleWith([CAPTURE_MODULE]);
});

describe('replay of saved histories', () => {
  it('holds one generation: exactly the histories the recording script records, no more, no fewer', () => {
    expect(RECORDED.length).toBeGreaterThanOrEqual(30);
    expect(files).toEqual(RECORDED);
  });

  it.each(files)('%s replays, asking for the same inputs and ending as recorded', async (file) => {
    const history = load(file);
    // The deployed bundle: no determinism error.
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, sinks: REPLAY_SINKS, dataConverter: dataConverter() },
      history,
      workflowIdOf(file),
    );
    const before = await recorded(history);
    expect(before.calls.length).toBeGreaterThan(0);
    expect(before.ending).not.toBeNull();
    const now = await replayed(capturing, history, workflowIdOf(file));
    const unexplained: string[] = [];
    for (const d of differences(before, now)) {
      const accepted = acceptedFor(file.replace(/\.json$/, ''), d);
      if (accepted) used.add(accepted);
      else unexplained.push(describeDifference(d));
    }
    expect(unexplained).toEqual([]);
  });

  it('every accepted difference still occurs in some fixture', () => {
    expect(ACCEPTED_DIFFERENCES.filter((a) => !used.has(a)).map((a) => a.why)).toEqual([]);
  });

  it('an input or a result the code would not produce is caught, though the SDK replays it without complaint', async () => {
    const file = 'destructive-approved.json';
    const history = load(file);
    const events = history.events ?? [];
    // Change what the history says the delete was asked (local tools leave no input in history), and what the run returned.
    const tool = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool')!.activityTaskScheduledEventAttributes!;
    const [input] = (await recorded({ events: [{ activityTaskScheduledEventAttributes: tool }] })).calls[0].args as [RunToolInput];
    tool.input!.payloads![0] = defaultPayloadConverter.toPayload({ ...input, args: { path: 'secrets.env' } });
    const done = events.at(-1)!.workflowExecutionCompletedEventAttributes!;
    const result = (await recorded({ events: [{ workflowExecutionCompletedEventAttributes: done }] })).ending as { value: RunResult };
    done.result!.payloads![0] = defaultPayloadConverter.toPayload({ ...result.value, turns: result.value.turns + 1 });

    await Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, sinks: REPLAY_SINKS, dataConverter: dataConverter() },
      history,
      workflowIdOf(file),
    );
    // What the fixture already differs by (accepted-differences.ts) aside.
    const found = differences(await recorded(history), await replayed(capturing, history, workflowIdOf(file))).filter((d) => !acceptedFor(file.replace(/\.json$/, ''), d));
    expect(found.map((d) => [d.at, d.path, d.recorded, d.replayed])).toEqual([
      [expect.stringMatching(/^call \d+ runTool$/), 'input[0].args.path', 'secrets.env', input.args.path],
      ['ending', 'result.turns', result.value.turns + 1, result.value.turns],
    ]);
  });
});
