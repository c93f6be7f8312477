// Structured output in the loop (input `outputSchema`): a reply without tool
// calls ends the run only when it is JSON valid against the schema. A miss
// (not JSON, or not valid) goes back to the model as a user message carrying
// the validator's words, and the loop takes another turn within the run's
// turn cap and budget; after `maxOutputRetries` misses the run ends `failed`,
// errorType InvalidOutput (a result, like every failed exit, not a workflow
// failure). The check itself is common/output-schema.ts, deterministic.
import { checkAnswer, outputFeedback } from '../common/output-schema.js';
import { failedExit, structuredExit as structured, type Exit } from './exits.js';
import type { RunContext } from './run-context.js';

/** The error type of a run whose answers kept missing its outputSchema. */
export const INVALID_OUTPUT = 'InvalidOutput';

/** The exit of a final answer under an outputSchema: completed with its value, failed InvalidOutput, or null (the model is told, and asked again). */
export function structuredExit(ctx: Pick<RunContext, 'cfg' | 'state' | 'trace'>, output: string): Exit | null {
  const { cfg, state } = ctx;
  const schema = cfg.outputSchema as Record<string, unknown>;
  const retries = cfg.maxOutputRetries ?? 0;
  const check = checkAnswer(schema, output);
  if (check.ok) return structured('the model answered with JSON valid against the output schema', output, check.value);
  const misses = (state.outputMisses ?? 0) + 1;
  state.outputMisses = misses;
  ctx.trace.emit('output_invalid', { turn: state.turns, misses, maxOutputRetries: retries, problem: check.problem.slice(0, 500) });
  if (misses > retries) {
    const reason = `the model's final answer missed the output schema ${misses} time${misses === 1 ? '' : 's'} (maxOutputRetries ${retries}); the last: ${check.problem.slice(0, 500)}`;
    return failedExit(reason, INVALID_OUTPUT);
  }
  state.messages.push({ role: 'user', content: outputFeedback(check.problem, schema, retries - misses + 1) });
  return null;
}
