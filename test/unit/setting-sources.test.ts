// One schema per setting (common/settings.ts): an AgentPlugin option and the
// standalone worker's variable take the same values, and a refusal names the
// setting where it came from: the option, or the variable.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../node/config.js';
import { AgentPlugin } from '../../worker/agent-plugin.js';
import { pluginOptionsFromEnv, standalonePlugin } from '../../worker/env-options.js';
import type { AgentPluginOptions } from '../../worker/plugin-options.js';
import { SEED_FILES } from '../../activities/tools/workspace.js';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { resolve } from 'node:path';

const PROMPT_COUNT = { factor: 3, overheadTokens: 600 };
const PRICES = { 'house-7b': { inputPerMTokUsd: 0.2, outputPerMTokUsd: 0.8, promptCount: PROMPT_COUNT } };
const quiet = { log: () => {}, warn: () => {} };
/** The standalone worker's plugin, made from this environment as `npm run worker` makes it. */
const envPlugin = (env: Record<string, string>) => standalonePlugin(pluginOptionsFromEnv(env).plugin, [], null, quiet);

describe('modelPrices with a promptCount margin', () => {
  it('is accepted as the AgentPlugin option modelPrices', () => {
    expect(() => new AgentPlugin({ model: { baseUrl: 'http://127.0.0.1:1/v1' }, workspace: '/tmp/ws', modelPrices: PRICES, log: quiet })).not.toThrow();
  });

  it('is accepted as AGENT_MODEL_PRICES, all the way into the standalone worker\'s plugin', () => {
    const env = { AGENT_MODEL_PRICES: JSON.stringify(PRICES) };
    expect(pluginOptionsFromEnv(env).plugin.modelPrices?.['house-7b'].promptCount).toEqual(PROMPT_COUNT);
    expect(() => envPlugin(env)).not.toThrow();
  });

  it('a bad margin is refused the same way by both, each naming its own source', () => {
    const bad = { m: { inputPerMTokUsd: 1, outputPerMTokUsd: 2, promptCount: { factor: 0.5, overheadTokens: 0 } } };
    expect(() => new AgentPlugin({ model: { baseUrl: 'http://127.0.0.1:1/v1' }, workspace: '/tmp/ws', modelPrices: bad, log: quiet })).toThrow(
      'AgentPlugin option modelPrices.m.promptCount.factor must be a number between 1 and 100, got 0.5',
    );
    expect(() => pluginOptionsFromEnv({ AGENT_MODEL_PRICES: JSON.stringify(bad) })).toThrow('AGENT_MODEL_PRICES m.promptCount.factor must be a number between 1 and 100, got 0.5');
  });
});

describe('an invalid value names where it came from', () => {
  it('an option: AgentPlugin option runDefaults.maxTurns', () => {
    expect(() => new AgentPlugin({ model: { baseUrl: 'http://127.0.0.1:1/v1' }, workspace: '/tmp/ws', runDefaults: { maxTurns: 0 }, log: quiet })).toThrow(
      /^AgentPlugin option runDefaults\.maxTurns must be a positive integer, got 0$/,
    );
  });

  it('a variable: AGENT_DEFAULT_MAX_TURNS, quoting the text as set', () => {
    expect(() => loadConfig({ AGENT_DEFAULT_MAX_TURNS: '0' })).toThrow(/^AGENT_DEFAULT_MAX_TURNS must be a positive integer, got "0"$/);
    expect(() => loadConfig({ AGENT_DEFAULT_MAX_TURNS: 'ten' })).toThrow(/^AGENT_DEFAULT_MAX_TURNS must be a positive integer, got "ten"$/);
    expect(pluginOptionsFromEnv({ AGENT_DEFAULT_MAX_TURNS: '10' }).plugin.runDefaults?.maxTurns).toBe(10);
  });

  it('the options the environment made are checked by the plugin\'s schema, and a refusal there names the variable, not an option nobody wrote', () => {
    const { plugin } = pluginOptionsFromEnv({});
    expect(() => standalonePlugin({ ...plugin, heartbeatEveryMs: 0 }, [], null, quiet)).toThrow(/^AGENT_HEARTBEAT_MS must be a positive integer, got 0$/);
    expect(() => standalonePlugin({ ...plugin, runDefaults: { maxBudgetUsd: -1 } }, [], null, quiet)).toThrow(/^AGENT_DEFAULT_BUDGET_USD must be a number > 0, got -1$/);
  });
});

describe('the environment loader produces AgentPlugin options, not a parallel configuration', () => {
  it('the standalone worker\'s options are AgentPluginOptions a team could pass as they are, with the standalone defaults', () => {
    const { plugin } = pluginOptionsFromEnv({ AGENT_WORKSPACE: '/srv/ws', AGENT_TOOLS: 'list_files', AGENT_DEFAULT_MAX_TURNS: '7' });
    // The same object, given to AgentPlugin with the option names (as a team would), is accepted.
    const asTeamWrote: AgentPluginOptions = { ...plugin, log: quiet };
    expect(() => new AgentPlugin(asTeamWrote)).not.toThrow();
    expect(plugin).toMatchObject({
      model: { baseUrl: 'http://127.0.0.1:8787/v1' },
      workspace: '/srv/ws',
      builtinTools: true,
      seedFiles: SEED_FILES,
      only: ['list_files'],
      ledger: { kind: 'folder', dir: '/srv/ws/.ledger' },
      messageStoreDir: '/srv/ws/.messages',
      traceDir: resolve(PROJECT_ROOT, '.data/traces'),
      retention: { enabled: true },
      runDefaults: { maxTurns: 7 },
      ownQueue: true,
    });
    // AGENT_TASK_QUEUE names the queue: no queue of its own.
    expect(pluginOptionsFromEnv({ AGENT_TASK_QUEUE: 'q' }).plugin.ownQueue).toBe(false);
  });

  it('the process config holds only what the plugin does not own: connection, task queue, ports, Worker.create\'s settings', () => {
    const keys = Object.keys(loadConfig({})).sort();
    expect(keys).toEqual(
      ['devServer', 'maxCachedWorkflows', 'metricsAddress', 'namespace', 'providerPort', 'stickyTimeoutMs', 'taskQueue', 'taskQueueNamed', 'temporalAddress', 'temporalConnection', 'toolModules', 'traceDir', 'tracing', 'versioning', 'workflowBundlePath'].sort(),
    );
    // No plugin option's name among them (traceDir is the CLI's too: it follows a run's trace there).
    const pluginOwned = Object.keys(pluginOptionsFromEnv({}).plugin).filter((k) => k !== 'traceDir');
    expect(keys.filter((k) => pluginOwned.includes(k))).toEqual([]);
  });
});
