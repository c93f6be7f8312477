// What a team's worker (AgentPlugin, configured by options) does with the
// environment variables docs/plugin.md lists beside its options. A variable a
// worker silently ignores is a promise broken: a team that starts its worker
// with AGENT_APPROVERS and no runDefaults.approvers believes decisions are
// signed while anyone's unsigned approve deletes. So:
// - the settings that guard decisions, AGENT_APPROVERS and
//   AGENT_REQUIRE_ARGS_HASH, are read when their option is absent, and both
//   set is refused at start, naming both (which one was meant is not ours to
//   guess);
// - AGENT_PAYLOAD_KEYS is read when `payloadKeys` is absent (node/codec-plugin.ts);
// - every other listed variable set while its option is absent is named in
//   one warning at start (the team reads it into the option, or unsets it).
//   Refusing those would stop the common `apiKey: process.env.LLM_API_KEY`,
//   `workspace: process.env.AGENT_WORKSPACE` workers for nothing.
// The standalone worker (`npm run worker`) reads the environment into its
// options itself (./env-options.ts) and never comes here.
import { approverPolicy, list } from '../node/config.js';
import type { ApproverPolicy } from '../common/signed-decision.js';
import type { AgentPluginOptions } from './plugin-options.js';
import { OPTION_NAMES, OPTION_VARIABLES, type SettingNames } from './setting-names.js';

/** What the environment adds to a team's worker, and the names its refusals use for what came from it. */
export interface PluginEnvironment {
  approvers?: ApproverPolicy;
  /** AGENT_BUILTIN_TOOLS, read when the builtinTools option is absent. */
  builtinTools?: boolean;
  requireArgsHash?: string[];
  /** OPTION_NAMES, with the variable's name for each setting read from the environment. */
  names: SettingNames;
  /** One line naming the listed variables set here that this worker does not read; null when none. */
  warning: string | null;
}

const rd = (o: AgentPluginOptions) => o.runDefaults ?? {};

/** The option at a dotted path (`retention.maxAgeMs`), or undefined. */
function optionAt(o: AgentPluginOptions, path: string): unknown {
  let at: unknown = o;
  for (const key of path.split('.')) at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}

/** The variables docs/plugin.md lists for the plugin that it does not read, and the option that takes each one's place (one table: ./setting-names.ts). */
const UNREAD = OPTION_VARIABLES.filter((v) => v.warnUnread !== false);

/**
 * Reads the decision-guarding variables for a team's worker and names the
 * listed ones it does not read; throws one line when a setting is given both
 * ways, or when AGENT_APPROVERS cannot be read (naming the variable).
 */
export function pluginEnvironment(o: AgentPluginOptions, env: NodeJS.ProcessEnv): PluginEnvironment {
  const set = (name: string): string | null => {
    const v = env[name];
    return v !== undefined && v.trim() !== '' ? v : null;
  };
  const names: SettingNames = { ...OPTION_NAMES };
  const out: PluginEnvironment = { names, warning: null };
  const approvers = set('AGENT_APPROVERS');
  if (approvers !== null) {
    if (rd(o).approvers !== undefined) {
      throw new Error(`${OPTION_NAMES.approvers} and AGENT_APPROVERS are both set: one approvers policy decides who may sign; keep the option or the variable, not both`);
    }
    // Read and checked as the standalone worker reads it: errors name AGENT_APPROVERS (and its file).
    out.approvers = approverPolicy(approvers);
    names.approvers = 'AGENT_APPROVERS';
  }
  const hashed = list(env.AGENT_REQUIRE_ARGS_HASH);
  if (hashed !== null) {
    if (rd(o).requireArgsHash !== undefined) {
      throw new Error(`${OPTION_NAMES.requireArgsHash} and AGENT_REQUIRE_ARGS_HASH are both set: keep the option or the variable, not both`);
    }
    out.requireArgsHash = hashed;
    names.requireArgsHash = 'AGENT_REQUIRE_ARGS_HASH';
  }
  // Asking for the built-in tools (delete_file among them) is the team's choice, by option or variable: a value that is neither yes nor no is refused, not guessed.
  const builtins = set('AGENT_BUILTIN_TOOLS');
  if (builtins !== null && o.builtinTools === undefined) {
    const v = builtins.trim().toLowerCase();
    if (!['1', 'true', 'yes', '0', 'false', 'no'].includes(v)) throw new Error(`AGENT_BUILTIN_TOOLS must be true or false (1/0, yes/no), got ${JSON.stringify(builtins)}`);
    out.builtinTools = ['1', 'true', 'yes'].includes(v);
  }
  // An option given makes the variable the team's own business: it may well be what the option was read from.
  const unread = UNREAD.filter((u) => set(u.variable) !== null && optionAt(o, u.option) === undefined);
  if (unread.length > 0) {
    out.warning = `AgentPlugin does not read ${unread.map((u) => u.variable).join(', ')} (set in this process's environment): give ${unread.map((u) => `option ${u.option}`).join(', ')} instead, or unset ${unread.length > 1 ? 'them' : 'it'}`;
  }
  return out;
}
