// Replays a history and compares what the current code computes with what the
// history recorded: every activity's and child run's input, the local
// activities in order, and how the execution ended (its result, its
// continue-as-new input, or its failure). The SDK's replay compares only the
// kind and order of commands: a model call sent a different transcript, a
// tool given other arguments, or a result with another cost all replay
// "without a determinism error" and would reach runs in flight unnoticed.
import type proto from '@temporalio/proto';
import { Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { isDeepStrictEqual } from 'node:util';
import { dataConverter } from '../../node/payload-codec.js';
import { REPLAY_SINKS } from '../../worker/create-worker.js';
import { decodePayloads } from '../helpers/decoded-history.js';
import type { CapturedCall, CaptureSinks } from './capture-interceptors.js';
import { here } from './bundle.js';
import type { InjectedSinks } from '@temporalio/worker';

type History = proto.temporal.api.history.v1.IHistory;

/** The interceptor module to bundle (test/replay/bundle.ts) for replayAndCompare. */
export const CAPTURE_MODULE = here('./capture-interceptors.ts');

type Ending = { kind: 'result'; value: unknown } | { kind: 'continueAsNew'; args: unknown[] } | { kind: 'failure'; message: string };

interface Observed {
  calls: CapturedCall[];
  ending: Ending | null;
}

/** What the history recorded, in the same shape as what the replay captures. */
export async function recorded(history: History): Promise<Observed> {
  const calls: CapturedCall[] = [];
  let ending: Ending | null = null;
  for (const e of history.events ?? []) {
    const act = e.activityTaskScheduledEventAttributes;
    if (act) calls.push({ kind: 'activity', type: act.activityType?.name ?? '', args: await decodePayloads(act.input?.payloads) });
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (child) calls.push({ kind: 'child', type: child.workflowType?.name ?? '', args: await decodePayloads(child.input?.payloads) });
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      // The marker keeps the local activity's type and result, not its input.
      const [data] = await decodePayloads(marker.details?.data?.payloads);
      calls.push({ kind: 'local', type: String((data as { activity_type?: unknown }).activity_type), args: [] });
    }
    const done = e.workflowExecutionCompletedEventAttributes;
    if (done) ending = { kind: 'result', value: (await decodePayloads(done.result?.payloads))[0] };
    const can = e.workflowExecutionContinuedAsNewEventAttributes;
    if (can) ending = { kind: 'continueAsNew', args: await decodePayloads(can.input?.payloads) };
    const failed = e.workflowExecutionFailedEventAttributes;
    if (failed) ending = { kind: 'failure', message: failed.failure?.message ?? '' };
  }
  return { calls, ending };
}

/** Replays the history on a bundle built with CAPTURE_MODULE and returns what the code asked for. */
export async function replayed(bundle: WorkflowBundleOption, history: History, workflowId: string): Promise<Observed> {
  const out: Observed = { calls: [], ending: null };
  // Values from the workflow sandbox have its own prototypes: copied here, so they compare by content alone.
  const here = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
  const capture: InjectedSinks<CaptureSinks>['capture'] = {
    call: { fn: (_info, call) => void out.calls.push(here(call)), callDuringReplay: true },
    continueAsNew: { fn: (_info, args) => void (out.ending = { kind: 'continueAsNew', args: here(args) }), callDuringReplay: true },
    result: { fn: (_info, value) => void (out.ending = { kind: 'result', value: here(value) }), callDuringReplay: true },
    failure: { fn: (_info, message) => void (out.ending = { kind: 'failure', message }), callDuringReplay: true },
  };
  await Worker.runReplayHistory(
    { workflowBundle: bundle, sinks: { ...REPLAY_SINKS, capture }, dataConverter: dataConverter() },
    history,
    workflowId,
  );
  return out;
}

/** One place where the replay computes another value than the history recorded. */
export interface Difference {
  /** "call 3 runTool", "call 2 local resolveConfig", or "ending". */
  at: string;
  /** Inside the value: "input[0].args.path", "result.costUsd", "continueAsNew[1].seq". */
  path: string;
  recorded: unknown;
  replayed: unknown;
}

/** Every leaf where two JSON values differ (a missing key is `undefined` on that side). */
export function leafDifferences(a: unknown, b: unknown, path: string): { path: string; recorded: unknown; replayed: unknown }[] {
  if (isDeepStrictEqual(a, b)) return [];
  const bothObjects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) return [{ path, recorded: a, replayed: b }];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) =>
    leafDifferences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`),
  );
}

const endingValue = (e: Ending | null): [string, unknown] =>
  e === null ? ['ending', null] : e.kind === 'result' ? ['result', e.value] : e.kind === 'continueAsNew' ? ['continueAsNew', e.args] : ['failure', e.message];

/** Every way the replay's calls, inputs and ending differ from the history's (empty: none). */
export function differences(history: Observed, replay: Observed): Difference[] {
  const out: Difference[] = [];
  const n = Math.max(history.calls.length, replay.calls.length);
  for (let i = 0; i < n; i++) {
    const h = history.calls[i];
    const r = replay.calls[i];
    const at = `call ${i + 1} ${h ? `${h.kind === 'activity' ? '' : `${h.kind} `}${h.type}` : '(none recorded)'}`;
    if (!h || !r || h.kind !== r.kind || h.type !== r.type) {
      out.push({ at, path: 'call', recorded: h && `${h.kind} ${h.type}`, replayed: r && `${r.kind} ${r.type}` });
      continue;
    }
    // A local activity's input is not in history.
    if (h.kind === 'local') continue;
    for (const d of leafDifferences(h.args, r.args, 'input')) out.push({ at, ...d });
  }
  const [hk, hv] = endingValue(history.ending);
  const [rk, rv] = endingValue(replay.ending);
  if (hk !== rk) out.push({ at: 'ending', path: 'kind', recorded: hk, replayed: rk });
  else for (const d of leafDifferences(hv, rv, hk)) out.push({ at: 'ending', ...d });
  return out;
}

/** A difference as one line for a test failure. */
export function describeDifference(d: Difference): string {
  const show = (v: unknown) => (v === undefined ? 'absent' : JSON.stringify(v).slice(0, 160));
  return `${d.at}: ${d.path}: recorded ${show(d.recorded)}, replay computes ${show(d.replayed)}`;
}
