// The worker's environment is read in one place (worker/config.ts); a value
// that would hurt runs is refused there, with the reason, before anything starts.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../common/project-root';
import { loadConfig, ZERO_CACHE_REFUSED } from '../common/config';

describe('worker configuration', () => {
  it('refuses a workflow cache of 0, which would cancel local tool calls mid-call', () => {
    expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' })).toThrow(ZERO_CACHE_REFUSED);
    expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '-3' })).toThrow(/WORKER_MAX_CACHED_WORKFLOWS must be a positive integer, got "-3"/);
    expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '12', WORKER_STICKY_TIMEOUT_MS: '750' })).toMatchObject({ maxCachedWorkflows: 12, stickyTimeoutMs: 750 });
    expect(loadConfig({})).toMatchObject({ maxCachedWorkflows: undefined, stickyTimeoutMs: undefined });
  });

  it('a worker process started with a cache of 0 exits at once with the reason, before connecting anywhere', () => {
    const out = spawnSync(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
      cwd: PROJECT_ROOT,
      // An address nothing listens on: the refusal must come before any connection attempt.
      env: { ...process.env, WORKER_MAX_CACHED_WORKFLOWS: '0', TEMPORAL_ADDRESS: '127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(out.status).not.toBe(0);
    expect(out.stderr).toContain('WORKER_MAX_CACHED_WORKFLOWS=0 is refused');
  });
});
