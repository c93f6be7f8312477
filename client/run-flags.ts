// `run`'s flags into the workflow's input, checked here with the workflow's
// own validation (common/input.ts), so a bad value is a usage error naming
// the flag before any run starts, not a run that starts and fails.
// parseArgs that takes `--flag -3` as the flag's value, so its own check names it (./parse-flags.ts).
import { parseFlags as parseArgs } from './parse-flags.js';
import { InputError, parseInput } from '../common/input.js';
import type { AgentInput } from '../common/contract.js';
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
export const NO_LIMIT_LEFT = '--max-turns none and --budget none together leave a run no exit but the model: keep one of the two limits';

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
 * Runs the workflow's validation on the input a command would start (for a
 * resume or a fork: the source's configuration with the flags on top, as
 * the workflow merges them). `flagOf`: the flag that set a field, or null
 * when it came from `elsewhere` (--input, the source run's configuration).
 * Which tools exist is the worker's to say: only the list's shape is checked here.
 */
export function checkInput(input: AgentInput, flagOf: (field: string) => string | null, elsewhere = '--input'): void {
  const { tools, ...rest } = input;
  const toolsChecked = Array.isArray(tools) && tools.every((t) => typeof t === 'string') ? rest : input;
  try {
    parseInput(toolsChecked);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const problem = err.message.slice(`invalid input: ${err.field} `.length);
    if (err.field === 'limits') {
      const line = noLimitLine(flagOf('limits.maxTurns'), flagOf('limits.maxBudgetUsd'));
      if (line) throw new UsageError(line);
    }
    const flag = flagOf(err.field);
    throw new UsageError(flag ? `${flag} ${problem}` : `${elsewhere}: ${err.field} ${problem}`);
  }
}

/** The input kept no limit: which `none` flag did it, and what to give instead. */
function noLimitLine(turnsFlag: string | null, budgetFlag: string | null): string | null {
  if (turnsFlag && budgetFlag) return NO_LIMIT_LEFT;
  if (budgetFlag) return '--budget none would leave the run no exit but the model: it has no turn cap either; give --max-turns N too, or keep a budget';
  if (turnsFlag) return '--max-turns none would leave the run no exit but the model: it has no budget either; give --budget USD too, or keep a turn cap';
  return null;
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
