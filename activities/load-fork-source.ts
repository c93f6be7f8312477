// Reads a fork's source (`forkFrom.run`) whatever its state: running, parked,
// completed, failed, reset (the workflow id's current execution, or the one
// `runId` names) or continued as new. The transcript query answers from the
// execution's state, which a replay of its history rebuilds: every tool
// result is the one the source recorded, and across continue-as-new the
// carried state holds the whole transcript.
import { Context } from '@temporalio/activity';
import { QueryNotRegisteredError, WorkflowNotFoundError } from '@temporalio/client';
import { configQuery, transcriptQuery } from '../common/run-messages.js';
import { costOfTurns, cutAtTurn } from '../common/fork.js';
import type { AgentInput, RunConfig } from '../common/contract.js';
import type { LoadedFork } from '../common/activity-contract.js';
import { decodePayload, turnCostsOf } from './turn-costs.js';

export async function loadForkSource(args: { run: string; runId?: string; atTurn: number }): Promise<LoadedFork> {
  const client = Context.current().client;
  const handle = client.workflow.getHandle(args.run, args.runId);
  const name = args.runId ? `run ${args.run} (execution ${args.runId})` : `run ${args.run}`;
  let described;
  try {
    described = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { ok: false, reason: `there is no ${name}` };
    throw err;
  }
  const messages = await handle.query(transcriptQuery);
  const cut = cutAtTurn(messages, args.atTurn);
  if (!cut.ok) return { ok: false, reason: `${name}: ${cut.reason}` };
  const config = await handle.query(configQuery).catch((err: unknown) => {
    // A run that failed before its loop set the query: its raw input is all there is.
    if (err instanceof QueryNotRegisteredError) return undefined;
    throw err;
  });
  const history = await handle.fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) return { ok: false, reason: `${name} has no input in its history` };
  const input = await decodePayload<AgentInput>(client, payload);
  return {
    ok: true,
    messages: cut.messages,
    input,
    ...(config ? { config } : {}),
    runId: described.runId,
    temporalStatus: described.status.name.toLowerCase(),
    sourceTurns: cut.sourceTurns,
    inheritedCostUsd: await inheritedCost(client, args.run, described.runId, args.atTurn, config),
  };
}

/**
 * What the source paid for its first `atTurn` turns, from its model calls'
 * results in its history (and its earlier executions'). A source that was
 * itself a fork adds what it inherited; a resumed source's earlier turns are
 * in another run's history: null then, rather than a wrong figure.
 */
async function inheritedCost(client: Context['client'], run: string, runId: string, atTurn: number, config: RunConfig | undefined): Promise<number | null> {
  if (atTurn === 0) return 0;
  if (!config) return null;
  const costs = await turnCostsOf(client, run, runId, config.pricing);
  const from = config.forkFrom;
  if (from && from.atTurn > 0) {
    if (from.inheritedCostUsd === null || atTurn <= from.atTurn) return null;
    const own = costOfTurns(costs.slice(from.atTurn), atTurn - from.atTurn);
    return own === null ? null : Math.round((own + from.inheritedCostUsd) * 1e12) / 1e12;
  }
  return costOfTurns(costs, atTurn);
}
