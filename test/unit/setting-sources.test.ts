// One schema per setting (common/settings.ts): an AgentPlugin option and the
// standalone worker's variable take the same values, and a refusal names the
// setting where it came from: the option, or the variable.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../node/config.js';
import { AgentPlugin } from '../../worker/agent-plugin.js';
import { agentPluginFor, workerSettingsFromConfig } from '../../worker/create-worker.js';

const PROMPT_COUNT = { factor: 3, overheadTokens: 600 };
const PRICES = { 'house-7b': { inputPerMTokUsd: 0.2, outputPerMTokUsd: 0.8, promptCount: PROMPT_COUNT } };
const quiet = { log: () => {}, warn: () => {} };
/** The standalone worker's plugin, made from this environment as `npm run worker` makes it. */
const envPlugin = (env: Record<string, string>) => agentPluginFor(workerSettingsFromConfig(loadConfig(env), [], null, quiet));

describe('modelPrices with a promptCount margin', () => {
  it('is accepted as the AgentPlugin option modelPrices', () => {
    expect(() => new AgentPlugin({ model: { baseUrl: 'http://127.0.0.1:1/v1' }, workspace: '/tmp/ws', modelPrices: PRICES, log: quiet })).not.toThrow();
  });

  it('is accepted as AGENT_MODEL_PRICES, all the way into the standalone worker\'s plugin', () => {
    const env = { AGENT_MODEL_PRICES: JSON.stringify(PRICES) };
    expect(loadConfig(env).modelPrices['house-7b'].promptCount).toEqual(PROMPT_COUNT);
    expect(() => envPlugin(env)).not.toThrow();
  });

  it('a bad margin is refused the same way by both, each naming its own source', () => {
    const bad = { m: { inputPerMTokUsd: 1, outputPerMTokUsd: 2, promptCount: { factor: 0.5, overheadTokens: 0 } } };
    expect(() => new AgentPlugin({ model: { baseUrl: 'http://127.0.0.1:1/v1' }, workspace: '/tmp/ws', modelPrices: bad, log: quiet })).toThrow(
      'AgentPlugin option modelPrices.m.promptCount.factor must be a number between 1 and 100, got 0.5',
    );
    expect(() => loadConfig({ AGENT_MODEL_PRICES: JSON.stringify(bad) })).toThrow('AGENT_MODEL_PRICES m.promptCount.factor must be a number between 1 and 100, got 0.5');
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
    expect(loadConfig({ AGENT_DEFAULT_MAX_TURNS: '10' }).runDefaults.maxTurns).toBe(10);
  });

  it('the options the environment made are checked by the plugin\'s schema, and a refusal there names the variable, not an option nobody wrote', () => {
    const cfg = loadConfig({});
    expect(() => agentPluginFor(workerSettingsFromConfig({ ...cfg, heartbeatEveryMs: 0 }, [], null, quiet))).toThrow(/^AGENT_HEARTBEAT_MS must be a positive integer, got 0$/);
    expect(() => agentPluginFor(workerSettingsFromConfig({ ...cfg, runDefaults: { maxBudgetUsd: -1 } }, [], null, quiet))).toThrow(/^AGENT_DEFAULT_BUDGET_USD must be a number > 0, got -1$/);
  });
});
