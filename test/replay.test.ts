// Determinism: every saved history replays on the current workflow code. A
// change to the loop that would break runs in flight fails here, before it is
// deployed (see "Changing the loop safely" in the README).
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { dataConverter } from '../common/payload-codec';
import { REPLAY_SINKS } from '../worker/create-worker';

const DIR = join(import.meta.dirname, 'fixtures', 'histories');
const files = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

describe('replay of saved histories', () => {
  it('covers every scenario', () => {
    expect(files.length).toBeGreaterThanOrEqual(18);
  });

  it.each(files)('%s replays without a determinism error', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') }, sinks: REPLAY_SINKS, dataConverter: dataConverter() },
      history,
      `fixture-${file.replace(/\.json$/, '')}`,
    );
  });
});
