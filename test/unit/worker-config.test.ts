// The worker's environment is read in one place (node/config.ts, by the schema of node/env-schema.ts); a value
// that would hurt runs is refused there, with the reason, before anything starts.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { loadConfig, ZERO_CACHE_REFUSED } from '../../node/config.js';
import { pluginOptionsFromEnv } from '../../worker/env-options.js';

/** The standalone worker's AgentPlugin options, as this environment makes them. */
const options = (env: NodeJS.ProcessEnv) => pluginOptionsFromEnv(env).plugin;

describe('worker configuration', () => {
  it('refuses a workflow cache of 0, which would cancel local tool calls mid-call', () => {
    expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' })).toThrow(ZERO_CACHE_REFUSED);
    expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '-3' })).toThrow(/WORKER_MAX_CACHED_WORKFLOWS must be a positive integer, got "-3"/);
    expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '12', WORKER_STICKY_TIMEOUT_MS: '750' })).toMatchObject({ maxCachedWorkflows: 12, stickyTimeoutMs: 750 });
    expect(loadConfig({})).toMatchObject({ maxCachedWorkflows: undefined, stickyTimeoutMs: undefined });
  });

  it('a typed variable set wrong stops the process in one line naming it and quoting the value; an empty one counts as unset', () => {
    expect(() => loadConfig({ PORT: '80a' })).toThrow(/^PORT must be a port number from 1 to 65535, got "80a"$/);
    expect(() => loadConfig({ METRICS_PORT: 'on' })).toThrow(/^METRICS_PORT must be a port number from 1 to 65535, or off, got "on"$/);
    expect(() => loadConfig({ AGENT_TOOLSET_CHECK: 'ignore' })).toThrow(/^AGENT_TOOLSET_CHECK must be one of refuse, warn, got "ignore"$/);
    expect(() => loadConfig({ AGENT_DEFAULT_BUDGET_USD: '-1' })).toThrow(/^AGENT_DEFAULT_BUDGET_USD must be a number > 0, got "-1"$/);
    expect(() => loadConfig({ LLM_BASE_URL: 'htp://127.0.0.1:8787/v1' })).toThrow(/^LLM_BASE_URL must be an http: or https: URL, got "htp:\/\/127\.0\.0\.1:8787\/v1"$/);
    expect(() => loadConfig({ LLM_BASE_URL: '127.0.0.1:8787/v1' })).toThrow(/^LLM_BASE_URL must be an http: or https: URL, got "127\.0\.0\.1:8787\/v1"$/);
    expect(options({ LLM_BASE_URL: 'https://api.example.com/v1' }).model).toEqual({ baseUrl: 'https://api.example.com/v1' });
    expect(() => options({ AGENT_MODEL_PRICES: '{"m": {"inputPerMTokUsd": 1}}' })).toThrow(/^AGENT_MODEL_PRICES m.outputPerMTokUsd must be a number >= 0, got undefined$/);
    // Read with the option's schema: a key it does not know is a typo, refused (it was dropped).
    expect(() => options({ AGENT_MODEL_PRICES: '{"m": {"inputPerMTokUsd": 1, "outputPerMTokUsd": 2, "note": "x"}}' })).toThrow(/^AGENT_MODEL_PRICES m.note is not a known field/);
    const env = { PORT: '', METRICS_PORT: 'off', AGENT_DEFAULT_BUDGET_USD: '0.5', AGENT_MODEL_PRICES: '{"m": {"inputPerMTokUsd": 1, "outputPerMTokUsd": 2}}' };
    expect(loadConfig(env)).toMatchObject({ providerPort: 8787, metricsAddress: null });
    expect(options(env)).toMatchObject({
      model: { baseUrl: 'http://127.0.0.1:8787/v1' },
      runDefaults: { maxBudgetUsd: 0.5 },
      modelPrices: { m: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    });
  });

  it('AGENT_REQUIRE_ARGS_HASH: a comma-separated list of tools whose approval must carry the call\'s argsHash', () => {
    expect(options({ AGENT_REQUIRE_ARGS_HASH: ' delete_file, mcp_write ,' }).runDefaults).toMatchObject({ requireArgsHash: ['delete_file', 'mcp_write'] });
    expect(options({ AGENT_REQUIRE_ARGS_HASH: '' }).runDefaults).not.toHaveProperty('requireArgsHash');
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

  it('the effect ledger: a folder by default, PostgreSQL by URL (its own database), never both; retention settings checked', () => {
    expect(options({ AGENT_WORKSPACE: '/srv/ws' }).ledger).toEqual({ kind: 'folder', dir: '/srv/ws/.ledger' });
    expect(options({ LEDGER_DIR: '/srv/ledger' }).ledger).toEqual({ kind: 'folder', dir: '/srv/ledger' });
    expect(options({ AGENT_LEDGER_URL: 'postgres://u:p@db:5432/agent_ledger' }).ledger).toEqual({ kind: 'postgres', url: 'postgres://u:p@db:5432/agent_ledger' });
    expect(() => options({ AGENT_LEDGER_URL: 'postgres://db/x', LEDGER_DIR: '/srv/ledger' })).toThrow('AGENT_LEDGER_URL and LEDGER_DIR are both set: the ledger is one store, set one of them');
    expect(() => options({ AGENT_LEDGER_URL: 'mysql://db/x' })).toThrow('AGENT_LEDGER_URL must be a postgres:// URL (or unset for the folder LEDGER_DIR), got mysql://…');
    expect(() => options({ AGENT_LEDGER_URL: 'postgres://u:secret@db:5432' })).toThrow(/^AGENT_LEDGER_URL names no database/);
    // A URL that does not parse is named without its password.
    expect(() => options({ AGENT_LEDGER_URL: 'postgres://u:secret@db:port/x' })).toThrow('AGENT_LEDGER_URL is not a URL: "postgres://…@db:port/x"');
    expect(options({}).retention).toEqual({ enabled: true, maxAgeMs: null, ledgerMaxBytes: null, traceMaxBytes: null, messageStoreMaxBytes: null, intervalMs: 3_600_000, logEveryPass: false });
    const set = { AGENT_RETENTION: 'off', AGENT_RETENTION_MAX_AGE_MS: '86400000', AGENT_LEDGER_MAX_BYTES: '1000000', AGENT_TRACE_MAX_BYTES: '2000000', AGENT_MESSAGE_STORE_MAX_BYTES: '3000000', AGENT_RETENTION_INTERVAL_MS: '60000', AGENT_RETENTION_LOG: 'passes' };
    expect(options(set).retention).toEqual({
      enabled: false,
      maxAgeMs: 86_400_000,
      ledgerMaxBytes: 1_000_000,
      traceMaxBytes: 2_000_000,
      messageStoreMaxBytes: 3_000_000,
      intervalMs: 60_000,
      logEveryPass: true,
    });
    expect(() => loadConfig({ AGENT_RETENTION_LOG: 'all' })).toThrow('AGENT_RETENTION_LOG must be changes or passes, got "all"');
    expect(() => loadConfig({ AGENT_RETENTION: 'sometimes' })).toThrow('AGENT_RETENTION must be on or off, got "sometimes"');
    expect(() => loadConfig({ AGENT_RETENTION_MAX_AGE_MS: '1d' })).toThrow('AGENT_RETENTION_MAX_AGE_MS must be a positive integer, got "1d"');
  });
});
