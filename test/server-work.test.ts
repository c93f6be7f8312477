// What a run writes to the server, read from its history: no patch marker
// (a loop change ships as a new pinned build, docs/deployment.md), and
// search-attribute upserts only where ops can see a
// state change, carrying only what changed; none at the start when the client
// set the starting attributes (as the project's CLI does). Each upsert is a
// billed Action on Temporal Cloud and a visibility write.
import proto from '@temporalio/proto';
import { transcriptQuery } from '../common/run-messages.js';
import type { WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { countActions } from '../bench/actions.js';
import { startingAttributes } from '../workflows/visibility.js';
import { AGENT_MODEL, AGENT_STATUS, AGENT_TURNS } from '../common/search-attributes.js';
import type { AgentInput } from '../common/contract.js';
import { useHarness } from './helpers/harness.js';
import { decodePayloads } from './helpers/decoded-history.js';
import type { agentRun } from '../workflows/index.js';

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

/** The ids of the patch markers in a history, in order. */
async function patchIds(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): Promise<string[]> {
  const ids: string[] = [];
  for (const e of history.events ?? []) {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_patch') continue;
    const [id] = await decodePayloads(m.details?.['patch-data']?.payloads);
    ids.push(String((id as { id?: unknown } | undefined)?.id));
  }
  return ids;
}

describe('server work per run', () => {
  it('a run started without attributes: no patch marker, an upsert at its start and one at its end', async () => {
    const handle = await h.start(input);
    await handle.result();
    const history = await handle.fetchHistory();
    const c = countActions(history);
    // No marker and no TemporalChangeVersion upsert: the run asks no patch.
    expect(await patchIds(history)).toEqual([]);
    expect([c.patchMarkers, c.patchUpserts]).toEqual([0, 0]);
    const upserts = await statusUpserts(handle);
    expect(upserts).toHaveLength(2);
    expect(upserts[0]).toEqual(expect.arrayContaining(['AgentStatus', 'AgentModel', 'AgentTurns', 'AgentCostUsd']));
    // The end carries what changed: status, turns, cost, reason — not the model it already shows.
    expect(upserts[1]).toEqual(expect.arrayContaining(['AgentStatus', 'AgentTurns', 'AgentCostUsd', 'AgentExitReason']));
    expect(upserts[1]).not.toContain('AgentModel');
    const sa = (await handle.describe()).typedSearchAttributes;
    expect([sa.get(AGENT_STATUS), sa.get(AGENT_MODEL), sa.get(AGENT_TURNS)]).toEqual(['completed', 'plan', 3]);
  });

  it('a run that continues as new, and one that refuses a call, ask no patch either', async () => {
    const continued = await h.start({ task: 'Keep listing files.', model: 'runaway', dedupe: 'off', limits: { maxTurns: 4 }, continueAsNewAtHistoryBytes: 4000 });
    expect((await continued.result()).status).toBe('max_turns_exceeded');
    const first = h.client.workflow.getHandle(continued.workflowId, continued.firstExecutionRunId);
    const firstHistory = await first.fetchHistory();
    expect(firstHistory.events?.some((e) => e.workflowExecutionContinuedAsNewEventAttributes)).toBe(true);
    expect(await patchIds(firstHistory)).toEqual([]);

    const refused = await h.start({ task: 'Delete it.', model: 'delete_bad_args' });
    await refused.result();
    // The call was refused before anyone was asked.
    const toolResults = (await refused.query(transcriptQuery)).filter((m) => m.role === 'tool');
    expect(toolResults.map((m) => m.content)).toEqual([expect.stringMatching(/^Error: .*delete_file/)]);
    expect(await patchIds(await refused.fetchHistory())).toEqual([]);
  });

  it('a run whose client set the starting attributes upserts only at its end', async () => {
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
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
