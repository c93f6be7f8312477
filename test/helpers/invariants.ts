// The harness's promises, checked after the fact from what a finished run left
// behind: its result, its history, its trace and its workspace. Shared by the
// randomized interleavings test and the soak benchmark; each broken promise is
// returned as a sentence, so a failure names what broke and in which run.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TraceLine } from '../../node/trace-format.js';
import { chainHistories } from '../../client/run-history.js';
import { turnCostUsd } from '../../common/turn-cost.js';
import type { ChatMessage, RunResult } from '../../common/contract.js';

export const INVARIANTS = {
  exit: 'a finished run reports one of the five exits',
  firstDecisionFinal: 'a call gets at most one decision; every later one is refused or ignored and traced',
  noDecisionLost: 'every decision message that reached the run is either the decision or traced as ignored',
  rejectedNeverRuns: 'a rejected call never reaches a tool',
  deletedOnlyWhenApproved: 'a file is deleted only by an approved call, and only once',
  honestEffects: 'a tool result that says "deleted" is true of the workspace',
  oneResultPerCall: 'every call gets at most one result, and exactly one unless the run stopped while it was pending',
  turnCap: 'the turn cap is never passed',
  budget: 'spend overshoots the budget by at most one turn of the tree',
  money: 'cost is the sum of the priced turns plus what the children spent',
  trace: 'the trace is gapless, each line once, with one run_stopped, last',
  noStuckTask: 'no workflow task fails for a reason in our code (only the server refusing a completion because a message arrived)',
} as const;

export interface RunEvidence {
  result: RunResult;
  input: { maxTurns: number | null; maxBudgetUsd: number | null; workspace: string };
  transcript: ChatMessage[];
  /** The workflow's own trace lines (no activity lines). */
  events: TraceLine[];
  /** Every trace line, activity lines included. */
  trace: TraceLine[];
  /** Decision messages the server recorded for this run: signals, and updates it accepted. */
  decisionsSent: { callId: unknown; verdict: string }[];
  /** The costs of every turn of the run's children (research), for the tree's overshoot. */
  childTurnCosts: number[];
  workspaceRoot: string;
  /** Workflow task failures in history: cause and message. */
  taskFailures: { cause: string; message: string }[];
}

const EXITS = ['completed', 'failed', 'max_turns_exceeded', 'budget_exceeded', 'interrupted'];

/** The broken promises, as sentences naming the invariant; empty when all hold. */
export function brokenPromises(e: RunEvidence): string[] {
  const broken: string[] = [];
  const fail = (key: keyof typeof INVARIANTS, detail: string) => broken.push(`${INVARIANTS[key]}: ${detail}`);
  const { result: r, events, transcript } = e;

  if (!EXITS.includes(r.status)) fail('exit', `status ${r.status}`);

  // --- decisions
  const decided = events.filter((l) => l.type === 'approval_decided');
  const ignored = events.filter((l) => l.type === 'signal_ignored' && l.signal !== 'cancel');
  const perCall = new Map<string, TraceLine[]>();
  for (const d of decided) perCall.set(String(d.callId), [...(perCall.get(String(d.callId)) ?? []), d]);
  for (const [callId, list] of perCall) if (list.length > 1) fail('firstDecisionFinal', `call ${callId} decided ${list.length} times`);
  for (const l of events) {
    if (l.type !== 'signal_ignored' || typeof l.callId !== 'string' || !perCall.has(l.callId)) continue;
    const decidedAt = perCall.get(l.callId)![0].seq;
    if (l.seq > decidedAt && !/^already decided/.test(String(l.reason))) fail('firstDecisionFinal', `a later decision for ${l.callId} was ignored for another reason: ${String(l.reason)}`);
  }
  // Updates the validator refused never reach history; signals and accepted updates all do.
  const sent = e.decisionsSent.length;
  if (decided.length + ignored.length !== sent) {
    fail('noDecisionLost', `${sent} decision messages in history, ${decided.length} decided + ${ignored.length} ignored in the trace`);
  }

  // --- effects
  const results = new Map<string, string[]>();
  for (const m of transcript) if (m.role === 'tool') results.set(m.tool_call_id, [...(results.get(m.tool_call_id) ?? []), m.content]);
  const calls = transcript.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
  const execs = e.trace.filter((l) => l.type === 'tool_exec');
  for (const d of decided) {
    if (d.decision !== 'reject') continue;
    if (execs.some((x) => x.callId === d.callId)) fail('rejectedNeverRuns', `rejected call ${String(d.callId)} has a tool execution`);
  }
  const deletes = calls.filter((c) => c.function.name === 'delete_file');
  const saidDeleted = deletes.filter((c) => (results.get(c.id) ?? []).some((t) => t.startsWith('deleted ')));
  for (const c of saidDeleted) {
    const d = perCall.get(c.id)?.[0];
    if (d?.decision !== 'approve') fail('deletedOnlyWhenApproved', `call ${c.id} says deleted without an approval`);
  }
  const fileGone = !existsSync(join(e.workspaceRoot, e.input.workspace, 'access.log'));
  const workspaceUsed = existsSync(join(e.workspaceRoot, e.input.workspace));
  if (workspaceUsed && fileGone && saidDeleted.length === 0) fail('deletedOnlyWhenApproved', 'access.log is gone but no call says it deleted it');
  if (saidDeleted.length > 0 && !fileGone) fail('honestEffects', 'a result says "deleted access.log" but the file is there');
  if (saidDeleted.length > 1) fail('deletedOnlyWhenApproved', `${saidDeleted.length} calls say they deleted the same file`);

  // --- protocol
  const pending = r.interruption?.type === 'approval' || r.interruption?.type === 'cancelled';
  for (const c of calls) {
    const n = results.get(c.id)?.length ?? 0;
    if (n > 1) fail('oneResultPerCall', `call ${c.id} has ${n} results`);
    if (n === 0 && !(pending || r.status === 'failed')) fail('oneResultPerCall', `call ${c.id} has no result and the run ended ${r.status}`);
  }

  // --- limits and money
  const turns = events.filter((l) => l.type === 'turn');
  if (turns.length !== r.turns) fail('money', `${turns.length} turn lines for ${r.turns} turns`);
  if (e.input.maxTurns !== null && r.turns > e.input.maxTurns) fail('turnCap', `${r.turns} turns for a cap of ${e.input.maxTurns}`);
  const own = turns.reduce((a, l) => a + Number(l.turnCostUsd), 0);
  if (Math.abs(own + r.children.costUsd - r.costUsd) > 1e-9) fail('money', `turns ${own} + children ${r.children.costUsd} != cost ${r.costUsd}`);
  if (e.input.maxBudgetUsd !== null) {
    const biggest = Math.max(0, ...turns.map((l) => Number(l.turnCostUsd)), ...e.childTurnCosts);
    if (r.costUsd - e.input.maxBudgetUsd > biggest + 1e-9) fail('budget', `spent ${r.costUsd} of ${e.input.maxBudgetUsd}, largest turn ${biggest}`);
  }
  for (const l of turns) {
    const recomputed = turnCostUsd({ promptTokens: Number(l.prompt_tokens), completionTokens: Number(l.completion_tokens) }, { inputPerMTokUsd: 2, outputPerMTokUsd: 12 });
    if (Math.abs(recomputed - Number(l.turnCostUsd)) > 1e-12) fail('money', `turn ${String(l.turn)} priced ${String(l.turnCostUsd)}, expected ${recomputed}`);
  }

  for (const f of e.taskFailures) {
    // The server makes the worker redo a task when a signal or update arrived while it ran.
    if (!/UNHANDLED_COMMAND|RESET_STICKY|UNHANDLED_UPDATE/.test(f.cause)) fail('noStuckTask', `${f.cause}: ${f.message.slice(0, 300)}`);
  }

  // --- trace
  const seqs = events.map((l) => l.seq);
  if (seqs.some((s, i) => s !== i + 1)) fail('trace', `seq ${seqs.join(',')}`);
  const stops = events.filter((l) => l.type === 'run_stopped');
  if (stops.length !== 1 || events.at(-1)?.type !== 'run_stopped') fail('trace', `${stops.length} run_stopped lines, last line ${String(events.at(-1)?.type)}`);
  return broken;
}

/** The decision messages (signals approve/reject, accepted decide updates) in a run's history, across executions. */
export async function decisionsInHistory(client: Client, workflowId: string): Promise<{ callId: unknown; verdict: string }[]> {
  const out: { callId: unknown; verdict: string }[] = [];
  const conv = client.options.loadedDataConverter;
  for (const history of await chainHistories(client, workflowId)) {
    for (const ev of history.events ?? []) {
      const sig = ev.workflowExecutionSignaledEventAttributes;
      if (sig && (sig.signalName === 'approve' || sig.signalName === 'reject')) {
        const payload = sig.input?.payloads?.[0];
        // Decision payloads are far below the codec's compression threshold: plain JSON.
        const arg = payload ? conv.payloadConverter.fromPayload<unknown>(payload) : undefined;
        out.push({ callId: (arg as { callId?: unknown } | null)?.callId, verdict: sig.signalName });
      }
      const upd = ev.workflowExecutionUpdateAcceptedEventAttributes;
      if (upd && upd.acceptedRequest?.input?.name === 'decide') {
        const payload = upd.acceptedRequest.input.args?.payloads?.[0];
        const arg = payload ? conv.payloadConverter.fromPayload<{ callId?: unknown; decision?: string }>(payload) : undefined;
        out.push({ callId: arg?.callId, verdict: String(arg?.decision) });
      }
    }
  }
  return out;
}

/** The workflow task failures in a run's history (every execution), with their cause. */
export async function workflowTaskFailures(client: Client, workflowId: string): Promise<{ cause: string; message: string }[]> {
  const out: { cause: string; message: string }[] = [];
  for (const history of await chainHistories(client, workflowId)) {
    for (const ev of history.events ?? []) {
      const f = ev.workflowTaskFailedEventAttributes;
      if (!f) continue;
      const cause = temporal.api.enums.v1.WorkflowTaskFailedCause[f.cause ?? 0] ?? String(f.cause);
      out.push({ cause, message: f.failure?.message ?? '' });
    }
  }
  return out;
}
