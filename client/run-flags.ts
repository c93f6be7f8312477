// `run`'s flags into the workflow's input, checked here with the workflow's
// own validation (./input-check.ts), so a bad value is a usage error naming
// the flag before any run starts, not a run that starts and fails.
// parseArgs that takes `--flag -3` as the flag's value, so its own check names it (./parse-flags.ts).
import { parseFlags as parseArgs } from './parse-flags.js';
import type { AgentInput } from '../common/contract.js';
import { checkInput as checkWithNames, noLimitLeft, type OptionNames } from './input-check.js';
import { UsageError } from './usage-error.js';

export const DEFAULT_TASK = 'Which file in the workspace mentions a timeout, and what does it say?';

/** The flag each input field comes from, to name it in an error. */
const FLAG_OF_FIELD: Record<string, string> = {
  task: '--task',
  model: '--model',
  toolErrors: '--tool-errors',
  dedupe: '--dedupe',
  tools: '--tools',
  workspace: '--workspace',
  approvalTimeoutMs: '--approval-timeout-ms',
  'limits.maxTurns': '--max-turns',
  'limits.maxBudgetUsd': '--budget',
  'limits.budgetMode': '--budget-mode',
  atTurn: '--at-turn',
  runId: '--run-id',
};

/** The CLI's refusals name its flags, as a person typed them (AgentClient's optionNames). */
export const CLI_NAMES: OptionNames = {
  name: (field) => (Object.hasOwn(FLAG_OF_FIELD, field) ? FLAG_OF_FIELD[field] : field),
  set: (field, value) => `${CLI_NAMES.name(field)} ${value}`,
  none: 'none',
};

/** A numeric flag: a number, or (for limits) `none`; anything else is a usage error naming the flag. */
export function numberFlag(flag: string, v: string | undefined, opts: { none?: boolean; integer?: boolean } = {}): number | null | undefined {
  if (v === undefined) return undefined;
  if (opts.none && v === 'none') return null;
  // Number('') is 0 and Number('1e3') is 1000: only plain decimals pass.
  const n = /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isFinite(n) || n <= 0 || (opts.integer && !Number.isInteger(n))) {
    const want = opts.integer ? 'a positive whole number' : 'a positive number';
    throw new UsageError(`--${flag} must be ${want}${opts.none ? ' or "none"' : ''}, got ${JSON.stringify(v)}`);
  }
  return n;
}

export function inputFromFlags(rest: string[]): { input: AgentInput; id: string | undefined; detach: boolean; toolsFlag: boolean } {
  const { values } = parseArgs({
    args: rest,
    options: {
      task: { type: 'string' },
      model: { type: 'string' },
      'max-turns': { type: 'string' },
      budget: { type: 'string' },
      'budget-mode': { type: 'string' },
      'tool-errors': { type: 'string' },
      dedupe: { type: 'string' },
      tools: { type: 'string' },
      workspace: { type: 'string' },
      'approval-timeout-ms': { type: 'string' },
      input: { type: 'string' },
      id: { type: 'string' },
      detach: { type: 'boolean' },
      debug: { type: 'boolean' },
    },
  });
  const base = values.input ? parseInputFlag(values.input) : { task: DEFAULT_TASK };
  const limits = { ...base.limits };
  const { maxTurns, maxBudgetUsd } = limitFlags(values);
  const approvalTimeoutMs = numberFlag('approval-timeout-ms', values['approval-timeout-ms'], { none: true, integer: true });
  if (maxTurns !== undefined) limits.maxTurns = maxTurns;
  if (maxBudgetUsd !== undefined) limits.maxBudgetUsd = maxBudgetUsd;
  if (values['budget-mode'] !== undefined) limits.budgetMode = values['budget-mode'] as 'soft' | 'hard';
  const input = {
    ...base,
    ...(values.task !== undefined ? { task: values.task } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(values['tool-errors'] !== undefined ? { toolErrors: values['tool-errors'] } : {}),
    ...(values.dedupe !== undefined ? { dedupe: values.dedupe } : {}),
    ...(values.tools !== undefined ? { tools: values.tools.split(',') } : {}),
    ...(values.workspace !== undefined ? { workspace: values.workspace } : {}),
    ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
    ...(values.debug ? { debug: true } : {}),
  } as AgentInput;
  checkInput(input, (field) => {
    const flag = FLAG_OF_FIELD[field];
    return flag !== undefined && values[flag.slice(2) as keyof typeof values] !== undefined ? flag : null;
  });
  return { input, id: values.id, detach: values.detach ?? false, toolsFlag: values.tools !== undefined };
}

/** Both limits lifted: refused by every command that starts a run, before it connects. */
export const NO_LIMIT_LEFT = noLimitLeft(CLI_NAMES);

/**
 * `--max-turns` and `--budget` as the input's limits (only those given);
 * both `none` is a usage error here, whatever else the run would have.
 */
export function limitFlags(values: { 'max-turns'?: string; budget?: string }): { maxTurns?: number | null; maxBudgetUsd?: number | null } {
  const maxTurns = numberFlag('max-turns', values['max-turns'], { none: true, integer: true });
  const maxBudgetUsd = numberFlag('budget', values.budget, { none: true });
  if (maxTurns === null && maxBudgetUsd === null) throw new UsageError(NO_LIMIT_LEFT);
  return { ...(maxTurns !== undefined ? { maxTurns } : {}), ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}) };
}

/**
 * The workflow's validation of the input `run` would start. `flagOf`: the
 * flag that set a field, or null when it came from `elsewhere` (--input).
 * Throws InvalidInputError naming the flag: a usage error.
 */
export function checkInput(input: AgentInput, flagOf: (field: string) => string | null, elsewhere = '--input'): void {
  checkWithNames(input, (field) => flagOf(field) !== null, elsewhere, CLI_NAMES);
}

function parseInputFlag(text: string): AgentInput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--input is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--input must be a JSON object like {"task": "..."}');
  return parsed as AgentInput;
}
