// One decision for many parked runs: `agent-harness approve --query '<visibility
// query>' --by NAME`. After a night of unattended runs an ops team approves
// thousands of parked calls; one command per run (describe, pollers, update,
// each a round trip) is what bounded that, not the loop. The batch lists the
// runs once through visibility, checks the pollers of each task queue once,
// and sends each run its own `decide` update with bounded concurrency:
// - each update is bound to what the list says the run is parked on (its
//   callId, argsHash and tool): a run that moved on since is refused by the
//   run itself, never approved blind;
// - with a key, each decision is signed for its own run (the status query
//   names the call's callKey): a signature is never shared between runs;
// - without a key, a run whose approvers policy asks for a signature refuses
//   the unsigned approval (its validator says so), and the batch reports it;
// - whatever the query says, only `agentRun` executions whose search
//   attributes say they are parked on an approval are decided: the query is
//   ANDed with that, and each listed run is checked again before it is sent.
import { WorkflowUpdateFailedError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { approveSignal, decideUpdate, type DecideInput } from '../common/run-messages.js';
import { signCall, type SigningOptions } from './signing.js';
import { queueWorkers } from './worker-check.js';
import { boundedAnswer } from './worker-check.js';
import { AGENT_AWAITING_CALL, AGENT_AWAITING_TOOL, AGENT_PENDING_ARGS_HASH, AGENT_STATUS } from '../common/search-attributes.js';
import { statusQuery } from '../common/run-messages.js';

/** Updates in flight at most: enough to keep a dev server busy, few enough not to starve the runs' own tasks. */
export const BATCH_CONCURRENCY = 64;

/**
 * How long one run's update waits to be accepted. Longer than a single
 * approve's 5 s: a batch queues its updates behind each other's workflow
 * tasks on a worker that is known to poll, so a slow acceptance is load, not
 * a dead worker.
 */
export const BATCH_ACCEPT_WAIT_MS = 30_000;

/** The server could not take the visibility query (its syntax, an unknown attribute): nothing was decided. */
export class QueryRefusedError extends Error {
  override readonly name = 'QueryRefusedError';
}

/** What a batch decision takes. */
export interface BatchDecisionOptions extends SigningOptions {
  /** A visibility query (Temporal's list filter) naming the runs, e.g. `AgentTool = "delete_file" AND StartTime > "2026-12-01T00:00:00Z"`. */
  query: string;
  /** Who decided (as `approve --by`). */
  by: string;
  /** Updates in flight at most (default BATCH_CONCURRENCY). */
  concurrency?: number;
  /** How long one run's update may wait to be accepted by a worker (default BATCH_ACCEPT_WAIT_MS); not accepted in time, the decision is recorded as its signal (result `pending`). */
  acceptTimeoutMs?: number;
}

/** What happened to one listed run. */
export interface BatchRunOutcome {
  workflowId: string;
  callId: string;
  toolName: string;
  /** approved (the run accepted the update); pending (recorded as the approve signal: no worker accepted in time); refused by the run; or not sent (reason says why). */
  result: 'approved' | 'pending' | 'refused' | 'not_sent';
  reason?: string;
}

/** The batch's outcome: counts, and every run it touched. */
export interface BatchDecisionOutcome {
  /** The query as sent to the server (the caller's, bounded to parked agentRun executions). */
  query: string;
  matched: number;
  approved: number;
  pending: number;
  refused: number;
  notSent: number;
  runs: BatchRunOutcome[];
}

/** The caller's query bounded to agentRun executions parked on an approval; throws naming `--query` when it is empty. */
export function boundedQuery(query: string): string {
  const q = query.trim();
  if (q === '') throw new Error('--query is empty: name the runs to decide (e.g. --query \'AgentAwaitingTool = "delete_file"\'); an empty query would approve every parked run');
  const problem = queryShapeProblem(q);
  if (problem) throw new Error(`--query ${problem}: ${JSON.stringify(q.slice(0, 200))}`);
  // Parenthesised, and its parentheses balanced outside its string literals,
  // so an OR in it cannot widen past the bound (`x") OR ("1"="1` is refused above).
  return `WorkflowType = "agentRun" AND ExecutionStatus = "Running" AND ${AGENT_STATUS.name} = "awaiting_approval" AND (${q})`;
}

/**
 * Why a query could break out of the parentheses it is put in, or null: a
 * string literal left open, a `)` closing more than it opened, a `(` never
 * closed. The server parses the rest (and refuses what it cannot).
 */
export function queryShapeProblem(q: string): string | null {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < q.length; i++) {
    const c = q[i];
    if (quote !== null) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return `closes a parenthesis it did not open (at character ${i + 1})`;
  }
  if (quote !== null) return `leaves a ${quote} string open`;
  return depth > 0 ? `leaves ${depth} parenthes${depth === 1 ? 'is' : 'es'} open` : null;
}

function keyword(info: WorkflowExecutionInfo, name: string): string | undefined {
  const v = info.searchAttributes?.[name];
  return Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
}

/** Approves the call every run matching `query` is parked on, each by its own `decide` update (signed per run with a key). */
export async function approveByQuery(client: Client, o: BatchDecisionOptions): Promise<BatchDecisionOutcome> {
  const query = boundedQuery(o.query);
  const concurrency = o.concurrency ?? BATCH_CONCURRENCY;
  const acceptMs = o.acceptTimeoutMs ?? BATCH_ACCEPT_WAIT_MS;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) throw new Error(`concurrency must be a whole number from 1 to 1000, got ${concurrency}`);
  const infos: WorkflowExecutionInfo[] = [];
  try {
    for await (const info of client.workflow.list({ query })) infos.push(info);
  } catch (err) {
    throw new QueryRefusedError(`the visibility query was refused by the server: ${(err as Error).message.split('\n')[0]} (query sent: ${query})`, { cause: err });
  }
  const runs: BatchRunOutcome[] = [];
  // A queue no worker polls: its runs' updates would wait for nobody; they are not sent.
  const polling = new Map<string, Promise<boolean>>();
  const polled = (queue: string) => {
    let p = polling.get(queue);
    if (!p) polling.set(queue, (p = queueWorkers(client, queue).then((w) => w.polling)));
    return p;
  };
  let next = 0;
  const one = async (info: WorkflowExecutionInfo): Promise<BatchRunOutcome> => {
    const callId = keyword(info, AGENT_AWAITING_CALL.name);
    const toolName = keyword(info, AGENT_AWAITING_TOOL.name) ?? '';
    const argsHash = keyword(info, AGENT_PENDING_ARGS_HASH.name);
    const base = { workflowId: info.workflowId, callId: callId ?? '', toolName };
    // Checked again whatever the query said: only a parked agentRun, with the call it is parked on.
    if (info.type !== 'agentRun' || info.status.name !== 'RUNNING' || keyword(info, AGENT_STATUS.name) !== 'awaiting_approval' || callId === undefined || argsHash === undefined) {
      return { ...base, result: 'not_sent', reason: 'not parked on an approval' };
    }
    if (!(await polled(info.taskQueue))) return { ...base, result: 'not_sent', reason: `no worker polls task queue ${info.taskQueue}` };
    const handle = client.workflow.getHandle(info.workflowId, info.runId);
    let input: DecideInput = { callId, decision: 'approve', by: o.by, argsHash, toolName };
    if (o.key !== undefined) {
      // Signed for this run's own call: its callKey is in its status.
      const parked = (await handle.query(statusQuery)).interruption;
      if (parked?.type !== 'approval' || parked.callId !== callId || parked.callKey === undefined) return { ...base, result: 'not_sent', reason: 'its status names no parked call to sign for' };
      input = { callId, decision: 'approve', by: o.by, ...signCall({ workflowId: info.workflowId, callId, callKey: parked.callKey, toolName: parked.toolName, decision: 'approve', argsHash, by: o.by, key: o.key, expiresInMs: o.expiresInMs }) };
    }
    try {
      // One round trip: the run applies (or refuses) a decision in the workflow
      // task that accepts it, so waiting for the answer costs no more than
      // waiting for the acceptance. The run may refuse it as it applies it (a
      // signature its policy asks for is checked there): its answer says.
      const answer = await boundedAnswer(client, acceptMs, () => handle.executeUpdate(decideUpdate, { args: [input] }));
      if (answer === 'no-answer') {
        // As the single approve does when no worker accepts in time: the update
        // was at most admitted (in the server's memory) or taken, so the same
        // decision is recorded as its signal; the run takes whichever comes
        // first and refuses the other, so one decision applies, never two.
        const { decision: _approve, reason: _none, ...fields } = input;
        await handle.signal(approveSignal, fields);
        return { ...base, result: 'pending', reason: `no answer from the run within ${acceptMs} ms: recorded as the approve signal too (one decision applies, never two); see its status` };
      }
      return { ...base, result: 'approved' };
    } catch (err) {
      // The run's own reason is the update failure's cause (its message alone says only "Workflow Update failed").
      const why = err instanceof WorkflowUpdateFailedError && err.cause ? err.cause.message : (err as Error).message;
      return { ...base, result: 'refused', reason: why.split('\n')[0] };
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(concurrency, infos.length) }, async () => {
      while (next < infos.length) {
        const i = next++;
        runs[i] = await one(infos[i]).catch((err: unknown) => ({ workflowId: infos[i].workflowId, callId: '', toolName: '', result: 'not_sent' as const, reason: (err as Error).message.split('\n')[0] }));
      }
    }),
  );
  const n = (r: BatchRunOutcome['result']) => runs.filter((x) => x.result === r).length;
  return { query, matched: infos.length, approved: n('approved'), pending: n('pending'), refused: n('refused'), notSent: n('not_sent'), runs };
}
