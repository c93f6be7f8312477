// What a run writes to the server, read from its history: one patch marker
// (not one per patch), and search-attribute upserts only where ops can see a
// state change, carrying only what changed; none at the start when the client
// set the starting attributes (as the project's CLI does). Each upsert is a
// billed Action on Temporal Cloud and a visibility write.
import proto from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { countActions } from '../bench/actions';
import { startingAttributes } from '../workflows/visibility';
import { AGENT_MODEL, AGENT_STATUS, AGENT_TURNS } from '../workflows/search-attributes';
import type { AgentInput } from '../common/contract';
import { useHarness } from './harness';

const { EventType } = proto.temporal.api.enums.v1;
const h = useHarness();
const input: AgentInput = { task: 'Which file mentions a timeout?', model: 'plan' };

/** The Agent* keys of each upsert, in order (the SDK's own TemporalChangeVersion upserts left out). */
async function statusUpserts(handle: WorkflowHandle): Promise<string[][]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .filter((e) => e.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES)
    .map((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).sort())
    .filter((keys) => !keys.includes('TemporalChangeVersion'));
}

describe('server work per run', () => {
  it('a run started without attributes: one patch marker, an upsert at its start and one at its end', async () => {
    const handle = await h.start(input);
    await handle.result();
    const c = countActions(await handle.fetchHistory());
    expect(c.patchMarkers).toBe(1);
    expect(c.patchUpserts).toBe(1);
    const upserts = await statusUpserts(handle);
    expect(upserts).toHaveLength(2);
    expect(upserts[0]).toEqual(expect.arrayContaining(['AgentStatus', 'AgentModel', 'AgentTurns', 'AgentCostUsd']));
    // The end carries what changed: status, turns, cost, reason — not the model it already shows.
    expect(upserts[1]).toEqual(expect.arrayContaining(['AgentStatus', 'AgentTurns', 'AgentCostUsd', 'AgentExitReason']));
    expect(upserts[1]).not.toContain('AgentModel');
    const sa = (await handle.describe()).typedSearchAttributes;
    expect([sa.get(AGENT_STATUS), sa.get(AGENT_MODEL), sa.get(AGENT_TURNS)]).toEqual(['completed', 'plan', 3]);
  });

  it('a run whose client set the starting attributes upserts only at its end', async () => {
    const handle = await h.client.workflow.start('agentRun', {
      taskQueue: h.taskQueue,
      workflowId: `plan-${randomUUID().slice(0, 8)}`,
      args: [input],
      typedSearchAttributes: startingAttributes(input),
    });
    await handle.result();
    expect(await statusUpserts(handle)).toHaveLength(1);
    const sa = (await handle.describe()).typedSearchAttributes;
    expect([sa.get(AGENT_STATUS), sa.get(AGENT_MODEL), sa.get(AGENT_TURNS)]).toEqual(['completed', 'plan', 3]);
  });
});
