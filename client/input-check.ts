// The input a call would start, checked with the workflow's own validation
// (common/input.ts) before any run starts, so a bad value is refused naming
// the option at fault rather than failing the run. Refusals name options the
// way the caller writes them (OptionNames): input fields for the library,
// flags for the CLI, so a person reads the flag they typed.
import { InputError, parseInput } from '../common/input.js';
import { BUILT_IN_DEFAULTS } from '../common/defaults.js';
import type { AgentInput } from '../common/contract.js';
import { InvalidInputError } from './agent-errors.js';

/**
 * How refusals name the options that caused them. The default
 * (INPUT_NAMES) names them as AgentClient's options and the input do
 * (`limits.maxTurns`, `null` lifts a limit); a command line built on
 * AgentClient passes its flags (`--max-turns`, `none`).
 */
export interface OptionNames {
  /** The option that sets this input field (`limits.maxTurns`, `approvalTimeoutMs`, `atTurn`), as the caller names it. */
  name(field: string): string;
  /** That option given a value, as the caller would write it (`limits.maxTurns: 6`, `--max-turns 6`). */
  set(field: string, value: string | number): string;
  /** What lifts a limit (`null`; `none` on a command line). */
  none: string;
}

/** Options named as the input names its fields. */
export const INPUT_NAMES: OptionNames = {
  name: (field) => field,
  set: (field, value) => `${field}: ${value}`,
  none: 'null',
};

/** Both limits lifted: a run with no exit but the model. */
export function noLimitLeft(names: OptionNames): string {
  return `${names.set('limits.maxTurns', names.none)} and ${names.set('limits.maxBudgetUsd', names.none)} together leave a run no exit but the model: keep one of the two limits`;
}

/**
 * Runs the workflow's validation on the input a call would start (for a
 * resume or a fork: the source's configuration with the options on top, as
 * the workflow merges them). `given(field)`: whether the caller set that
 * field (named then as `names` say), else it came from `elsewhere` (the
 * input, the source run's configuration, an export file). Which tools exist
 * is the worker's to say: only the list's shape is checked here.
 */
export function checkInput(input: AgentInput, given: (field: string) => boolean, elsewhere: string, names: OptionNames): void {
  const { tools, ...rest } = input;
  const toolsChecked = Array.isArray(tools) && tools.every((t) => typeof t === 'string') ? rest : input;
  try {
    // No catalogue: a list of tool names is taken as given, the worker checks the names.
    parseInput(toolsChecked, BUILT_IN_DEFAULTS, []);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const problem = err.message.slice(`invalid input: ${err.field} `.length);
    if (err.field === 'limits') {
      const line = noLimitLine(given('limits.maxTurns'), given('limits.maxBudgetUsd'), names);
      if (line) throw new InvalidInputError(line, 'limits');
    }
    throw new InvalidInputError(given(err.field) ? `${names.name(err.field)} ${problem}` : `${elsewhere}: ${err.field} ${problem}`, err.field);
  }
}

/** The input kept no limit: which lifted limit did it, and what to give instead. */
function noLimitLine(turns: boolean, budget: boolean, names: OptionNames): string | null {
  if (turns && budget) return noLimitLeft(names);
  if (budget) {
    return `${names.set('limits.maxBudgetUsd', names.none)} would leave the run no exit but the model: it has no turn cap either; give ${names.set('limits.maxTurns', 'N')} too, or keep a budget`;
  }
  if (turns) {
    return `${names.set('limits.maxTurns', names.none)} would leave the run no exit but the model: it has no budget either; give ${names.set('limits.maxBudgetUsd', 'USD')} too, or keep a turn cap`;
  }
  return null;
}
