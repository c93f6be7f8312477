// A run's cost per turn, read from its history: each model turn's activity is
// scheduled with the summary "model turn N" and completes with the model
// activity's answer (common/activity-contract.ts ModelAnswer): the reply's usage. Earlier executions (continue-as-new) are read through each start
// event's link to the one before; a reset execution's history holds the
// events it kept from the run it was reset from.
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { ModelAnswer } from '../common/activity-contract.js';
import type { Pricing } from '../common/contract.js';
import { turnCostUsd } from '../common/turn-cost.js';

type Payload = temporal.api.common.v1.IPayload;

/** One payload through the client's codecs and converter. */
export async function decodePayload<T>(client: Client, payload: Payload): Promise<T> {
  const converter = client.options.loadedDataConverter;
  const [decoded] = await converter.payloadCodecs.reduceRight(async (acc, codec) => codec.decode(await acc), Promise.resolve([payload]));
  return converter.payloadConverter.fromPayload<T>(decoded);
}

const MODEL_TURN = /^model turn (\d+)$/;

/** costs[k - 1] is turn k's cost, where the histories hold it; a turn they do not hold is left undefined. */
export async function turnCostsOf(client: Client, workflowId: string, runId: string, pricing: Pricing): Promise<(number | undefined)[]> {
  const costs: (number | undefined)[] = [];
  const seen = new Set<string>();
  for (let rid: string | undefined = runId; rid && !seen.has(rid); ) {
    seen.add(rid);
    const history = await client.workflow.getHandle(workflowId, rid).fetchHistory();
    const turnOf = new Map<string, number>();
    for (const e of history.events ?? []) {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled && e.userMetadata?.summary) {
        const turn = MODEL_TURN.exec(await decodePayload<string>(client, e.userMetadata.summary).catch(() => ''));
        if (turn) turnOf.set(String(e.eventId), Number(turn[1]));
      }
      const done = e.activityTaskCompletedEventAttributes;
      const turn = done ? turnOf.get(String(done.scheduledEventId)) : undefined;
      const result = done?.result?.payloads?.[0];
      // The latest execution is read first: what it recorded for a turn wins over a run it was reset from.
      if (turn !== undefined && result && costs[turn - 1] === undefined) {
        const answer = await decodePayload<ModelAnswer>(client, result);
        // A call a hard budget held back sent nothing and cost nothing: the turn's cost is its later call's.
        if (answer.called) costs[turn - 1] = turnCostUsd(answer.reply.usage, pricing);
      }
    }
    rid = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return costs;
}
