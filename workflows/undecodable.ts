// The run's handlers, guarded against a payload the worker's codec could not
// decode (common/undecodable.ts): a signal's is traced as ignored with the
// reason, an update's refused by its validator, so the sender learns why and
// the run goes on, cancellable and answering queries. A binary payload too
// (common/undecodable.ts, unreadableProblem): no handler takes one.
import type { SignalDefinition } from '@temporalio/workflow';
import type { UpdateDefinition } from '@temporalio/common';
import { unreadableProblem } from '../common/undecodable.js';
import { updateRefused } from './refusals.js';
import type { RunTrace } from './trace.js';

/** A signal handler that ignores, on record, a payload that could not be decoded or is binary. */
export function decodedSignal<T>(trace: RunTrace, def: SignalDefinition<[T]>, handler: (input: T) => void): (input: T) => void {
  const signal = def.name;
  return (input) => {
    const problem = unreadableProblem(input, `${signal} signal's payload`);
    if (problem) trace.emit('signal_ignored', { signal, reason: problem });
    else handler(input);
  };
}

/** An update validator that refuses a payload that could not be decoded or is binary before asking `validator`. */
export function decodedUpdate<R, T>(def: UpdateDefinition<R, [T]>, validator: (input: T) => void): (input: T) => void {
  return (input) => {
    const problem = unreadableProblem(input, `${def.name} update's payload`);
    if (problem) throw updateRefused(problem);
    validator(input);
  };
}
