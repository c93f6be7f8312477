// The record of decisions (`GET /api/audit`, `agent-harness audit`): one line
// per decision a run took — run, call, tool, argsHash, decision, signer, time —
// read from what Temporal keeps, with no store of our own. The runs active in
// the range come from a visibility query; each execution's history says what
// was decided:
// - a `decide` update is taken exactly when the server records it completed
//   with a result (a refusal by the validator leaves no event; one refused
//   as it was applied completes with a failure);
// - an `approve`/`reject` signal is always recorded, taken or not, so it is
//   counted only when the parking on that call (the AgentAwaitingCallId
//   search attribute the run upserts) ended in the workflow task that took
//   it; a signal the run ignored leaves the call parked.
// A `steer` with `interrupt: true` while a call is parked rejects that call: it
// is read like a reject (decision `reject`, via the steer's signal or update).
// The other decisions a person takes on a parked run are updates, listed when
// they completed with a result: `raiseBudget` (decision `raise_budget`, with
// the new `maxBudgetUsd`) and `reconcile` (`reconcile_happened` or
// `reconcile_retry`).
// The history is read, never replayed: no worker is needed, and closed runs
// cost one history read each.
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { decodeSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';
import proto from '@temporalio/proto';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const EventType = proto.temporal.api.enums.v1.EventType;

/** One decision taken: the contract's audit line. */
export interface AuditLine {
  workflowId: string;
  callId: string;
  toolName: string;
  argsHash: string;
  decision: AuditDecision;
  /** Who decided (the signer, when the decision was signed). */
  by: string;
  /** When Temporal recorded the decision (ISO-8601 UTC). */
  at: string;
  /** How it came: an update (`decide`, `steer`, `raiseBudget`, `reconcile`) or a signal (`approve`, `reject`, `steer`). */
  via: 'update' | 'signal';
  /** A `raise_budget` line: the budget it raised to, in USD. */
  maxBudgetUsd?: number;
  /** Whether it carried a signature (verified by the run before it was taken). */
  signed: boolean;
}

/** What was decided: a parked call approved or rejected (a steer with interrupt rejects), a budget raised, an unknown outcome reconciled. */
export type AuditDecision = 'approve' | 'reject' | 'raise_budget' | 'reconcile_happened' | 'reconcile_retry';

/** The audit's time range: decisions recorded at or after `from` and before `to`. */
export interface AuditRange {
  from: Date;
  to: Date;
}

/** The columns of the CSV form, in order: the contract's fields, then how the decision came. */
export const AUDIT_COLUMNS = ['workflowId', 'callId', 'toolName', 'argsHash', 'decision', 'by', 'at', 'via', 'signed'] as const;

/** Histories read at once: a large range is many runs, and each read is a round trip to the server. */
const PARALLEL_READS = 8;

const isoLiteral = (d: Date): string => `'${d.toISOString()}'`;

/**
 * Every decision taken in the range, oldest first. `taskQueue` narrows the
 * runs to one queue (tests, one team's runs).
 */
export async function auditDecisions(client: Client, range: AuditRange, options: { taskQueue?: string } = {}): Promise<AuditLine[]> {
  if (!(range.from.getTime() <= range.to.getTime())) throw new RangeError(`from (${range.from.toISOString()}) must not be after to (${range.to.toISOString()})`);
  // Every execution that was open at some time in the range: started before its end, and still running or closed after its start.
  const clauses = [`WorkflowType = 'agentRun'`, `StartTime <= ${isoLiteral(range.to)}`, `(ExecutionStatus = 'Running' OR CloseTime >= ${isoLiteral(range.from)})`];
  if (options.taskQueue !== undefined) clauses.push(`TaskQueue = '${options.taskQueue.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`);
  const executions: { workflowId: string; runId: string }[] = [];
  for await (const w of client.workflow.list({ query: clauses.join(' AND ') })) executions.push({ workflowId: w.workflowId, runId: w.runId });
  const out: AuditLine[] = [];
  for (let i = 0; i < executions.length; i += PARALLEL_READS) {
    const batch = await Promise.all(executions.slice(i, i + PARALLEL_READS).map((e) => executionDecisions(client, e.workflowId, e.runId)));
    for (const lines of batch) out.push(...lines.filter((l) => l.at >= range.from.toISOString() && l.at < range.to.toISOString()));
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.workflowId < b.workflowId ? -1 : 1));
}

interface Parking {
  callId: string;
  toolName: string;
  argsHash: string;
}

interface Candidate {
  line: AuditLine;
  /** The update's id, for a decide update (taken once it completes with a result). */
  updateId?: string;
}

/** The decisions one execution's history records as taken. */
export async function executionDecisions(client: Client, workflowId: string, runId: string): Promise<AuditLine[]> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const conv = client.options.loadedDataConverter;
  const decode = async (payloads: Payload[] | null | undefined): Promise<unknown> => {
    if (!payloads || payloads.length === 0) return undefined;
    const decoded = await conv.payloadCodecs.reduceRight(async (p, codec) => codec.decode(await p), Promise.resolve(payloads));
    return conv.payloadConverter.fromPayload(decoded[0]);
  };
  const out: AuditLine[] = [];
  let parked: Parking | null = null;
  // Decide updates accepted for the parked call (taken once completed with a result).
  let updates: Candidate[] = [];
  // Signals for the parked call recorded since the last workflow task completed: delivered to the next one.
  let arriving: Candidate[] = [];
  // Those delivered to the task that completed last: one of them ended the parking if that task's commands unpark it.
  let delivered: Candidate[] = [];
  const succeeded = new Set<string>();
  const events: HistoryEvent[] = history.events ?? [];
  // Update outcomes first: an update accepted in one task completes in the same or a later one.
  for (const e of events) {
    if (e.eventType !== EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED) continue;
    const a = e.workflowExecutionUpdateCompletedEventAttributes;
    if (a?.outcome?.success) succeeded.add(a.meta?.updateId ?? '');
  }
  // A parking ended by the last task's commands: the update accepted by that task may be recorded just after the upsert.
  let closing: { parking: Parking; updates: Candidate[]; delivered: Candidate[] } | null = null;
  const finish = () => {
    if (closing === null) return;
    // A decide update that completed with a result is the decision; else a signal the task that unparked took.
    const taken = closing.updates.find((c) => c.updateId !== undefined && succeeded.has(c.updateId)) ?? closing.delivered[0];
    if (taken) out.push(taken.line);
    closing = null;
  };
  const closeParking = (parking: Parking) => {
    finish();
    closing = { parking, updates, delivered };
    updates = [];
    delivered = [];
  };
  for (const e of events) {
    const at = eventTime(e);
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED || e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) finish();
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
      // Signals delivered to an earlier task that did not unpark were ignored by the run (refused, or not for the awaited call).
      delivered = arriving;
      arriving = [];
      continue;
    }
    if (e.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES) {
      const sa = decodeSearchAttributes(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields);
      if (!Object.hasOwn(sa, 'AgentAwaitingCallId') && !Object.hasOwn(sa, 'AgentAwaitingSince')) continue;
      const call = first(sa.AgentAwaitingCallId);
      const before = parked as Parking | null;
      // Unparked (or parked anew): the decision that did it was delivered to the task whose commands these are.
      if (before !== null && (call === null || call !== before.callId || Object.hasOwn(sa, 'AgentAwaitingSince'))) {
        closeParking(before);
        parked = null;
      }
      if (call !== null) parked = { callId: call, toolName: first(sa.AgentAwaitingTool) ?? before?.toolName ?? '', argsHash: first(sa.AgentPendingArgsHash) ?? '' };
      continue;
    }
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) {
      const a = e.workflowExecutionSignaledEventAttributes;
      const name = a?.signalName;
      if (name !== 'approve' && name !== 'reject' && name !== 'steer') continue;
      const current = parked as Parking | null;
      const input = record(await decode(a?.input?.payloads).catch(() => undefined));
      // An interrupting steer names no call: it rejects whichever is parked.
      if (name === 'steer') {
        if (current !== null && input.interrupt === true) arriving.push({ line: lineOf(workflowId, current, 'reject', input, at, 'signal') });
        continue;
      }
      if (current === null || input.callId !== current.callId) continue;
      arriving.push({ line: lineOf(workflowId, current, name, input, at, 'signal') });
      continue;
    }
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
      const a = e.workflowExecutionUpdateAcceptedEventAttributes;
      const req = a?.acceptedRequest;
      const name = req?.input?.name;
      if (name !== 'decide' && name !== 'steer' && name !== 'raiseBudget' && name !== 'reconcile') continue;
      const input = record(await decode(req?.input?.args?.payloads).catch(() => undefined));
      const updateId = req?.meta?.updateId ?? a?.protocolInstanceId ?? '';
      if (name === 'raiseBudget' || name === 'reconcile') {
        // Not a parked approval: taken exactly when the update completed with a result.
        if (!succeeded.has(updateId)) continue;
        out.push(otherLine(workflowId, name, input, parked as Parking | null, at));
        continue;
      }
      const steerCall = name === 'steer' && input.interrupt === true ? ((closing as { parking: Parking } | null)?.parking ?? (parked as Parking | null)) : null;
      if (name === 'steer' && steerCall === null) continue;
      if (steerCall !== null) input.callId = steerCall.callId;
      const decision = name === 'steer' ? 'reject' : input.decision === 'reject' ? 'reject' : input.decision === 'approve' ? 'approve' : null;
      const current = parked as Parking | null;
      const ending = closing as { parking: Parking; updates: Candidate[] } | null;
      if (decision === null) continue;
      // Accepted by the task that unparked: recorded after its upsert.
      if (ending !== null && input.callId === ending.parking.callId) ending.updates.push({ line: lineOf(workflowId, ending.parking, decision, input, at, 'update'), updateId });
      else if (current !== null && input.callId === current.callId) updates.push({ line: lineOf(workflowId, current, decision, input, at, 'update'), updateId });
    }
  }
  // Still parked when the history ends: only a completed update was taken (it answers once applied).
  finish();
  if (parked !== null) {
    delivered = [];
    closeParking(parked);
    finish();
  }
  return out;
}

/** A raiseBudget or reconcile update taken. */
function otherLine(workflowId: string, name: 'raiseBudget' | 'reconcile', input: Record<string, unknown>, parked: Parking | null, at: string): AuditLine {
  const callId = typeof input.callId === 'string' ? input.callId : '';
  const call = parked !== null && parked.callId === callId ? parked : null;
  const decision: AuditDecision = name === 'raiseBudget' ? 'raise_budget' : input.outcome === 'retry' ? 'reconcile_retry' : 'reconcile_happened';
  return {
    workflowId,
    callId,
    toolName: call?.toolName ?? '',
    argsHash: call?.argsHash ?? '',
    decision,
    by: typeof input.by === 'string' ? input.by : '',
    at,
    via: 'update',
    signed: typeof input.signature === 'string' && input.signature !== '',
    ...(name === 'raiseBudget' && typeof input.maxBudgetUsd === 'number' ? { maxBudgetUsd: input.maxBudgetUsd } : {}),
  };
}

function lineOf(workflowId: string, parked: Parking, decision: 'approve' | 'reject', input: Record<string, unknown>, at: string, via: 'update' | 'signal'): AuditLine {
  return {
    workflowId,
    callId: parked.callId,
    toolName: parked.toolName,
    argsHash: parked.argsHash || (typeof input.argsHash === 'string' ? input.argsHash : ''),
    decision,
    by: typeof input.by === 'string' ? input.by : '',
    at,
    via,
    signed: typeof input.signature === 'string' && input.signature !== '',
  };
}

const record = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

function first(values: unknown): string | null {
  const v = Array.isArray(values) ? values[0] : undefined;
  return typeof v === 'string' && v !== '' ? v : null;
}

function eventTime(e: HistoryEvent): string {
  const t = e.eventTime;
  const ms = t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
  return new Date(ms).toISOString();
}

/** A CSV field: quoted when it must be, and a leading = + - @ defused, so a spreadsheet never runs a name someone chose as a formula. */
export function csvField(value: string | boolean): string {
  let s = String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r']/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** The lines as CSV: a header of AUDIT_COLUMNS, one row per decision. */
export function auditCsv(lines: readonly AuditLine[]): string {
  const rows = [AUDIT_COLUMNS.join(','), ...lines.map((l) => AUDIT_COLUMNS.map((c) => csvField(l[c])).join(','))];
  return `${rows.join('\r\n')}\r\n`;
}

/** The lines as JSON lines. */
export function auditJsonl(lines: readonly AuditLine[]): string {
  return lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}

/**
 * A range bound as given on a command line or in a query string: an ISO-8601
 * time, or a duration back from now (`24h`, `30m`, `7d`). Throws naming `name`.
 */
export function parseTimeBound(text: string, name: string, now = Date.now()): Date {
  const rel = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (rel) return new Date(now - Number(rel[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 's' | 'm' | 'h' | 'd']);
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || !Number.isFinite(ms)) throw new RangeError(`${name} must be an ISO-8601 time (2026-12-05T10:00:00Z) or a duration back from now (30m, 24h, 7d), got ${JSON.stringify(text.slice(0, 64))}`);
  return new Date(ms);
}
