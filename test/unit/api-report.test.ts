// The public API report: api/<entry>.api.md, API Extractor's summary of what
// each entry of package.json `exports` declares (scripts/api-report.mjs).
// A change to a type a consumer sees fails here until someone reviews it and
// rewrites the report with `npm run api:update`, so it is never an accident.
// The check also fails on a declaration without a doc comment, or a type a
// public signature names that its entry does not export (issue 35, item 7),
// listing each with its place.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../node/project-root.js';

describe('the public API', () => {
  it('matches the checked-in report of every entry (api/*.api.md)', () => {
    const r = spawnSync(process.execPath, ['scripts/api-report.mjs', '--check'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  }, 300_000);
});
