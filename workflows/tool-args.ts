// Checks a call's arguments against its tool's JSON schema. The workflow runs
// it before anything else happens to a call (before a person is asked to
// approve it, before the cache, before any activity), and the tool activity
// runs it again as a last guard. Deterministic: the same schema and arguments
// always give the same answer, so it is safe in workflow code.
import { Ajv, type ValidateFunction } from 'ajv';
import { TOOL_SPECS } from './tool-catalogue';
import type { ToolName } from './types';

const ajv = new Ajv({ allErrors: true, strict: true });
const validators = new Map<ToolName, ValidateFunction>();

/** Why these arguments do not fit the tool's schema, in words the model can act on; null when they fit. */
export function argumentProblem(name: ToolName, args: Record<string, unknown>): string | null {
  let validate = validators.get(name);
  if (!validate) {
    validate = ajv.compile(TOOL_SPECS[name].parameters);
    validators.set(name, validate);
  }
  if (validate(args)) return null;
  const why = (validate.errors ?? []).map((e) => `${e.instancePath || 'arguments'} ${e.message ?? 'invalid'}`).join('; ');
  return `invalid arguments for ${name}: ${why}. Expected: ${JSON.stringify(TOOL_SPECS[name].parameters)}`;
}
