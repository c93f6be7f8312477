// The external contract (README, "The contract") through the real `temporal` CLI,
// on the production server: start, the status query, the approve, reject and
// cancel signals, the decide update, and `workflow list --query` on every
// search attribute the harness defines, answered by PostgreSQL visibility.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findTemporalCli } from '../../worker/dev-server/temporal-cli.js';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes.js';
import type { RunStatusView } from '../../common/contract.js';
import { addFault, freshWorkspace, marker, useHarness, waitFor } from '../helpers/harness.js';
import { cliRunResult } from '../helpers/temporal-cli.js';
import type { agentRun } from '../../workflows/index.js';

const h = useHarness();
const exec = promisify(execFile);

async function temporal(...args: string[]): Promise<string> {
  const { stdout } = await exec(findTemporalCli(), [...args, '--address', h.address, '--output', 'json'], { timeout: 60_000 });
  return stdout;
}
const start = (id: string, input: object) =>
  temporal('workflow', 'start', '--type', 'agentRun', '--task-queue', h.taskQueue, '--workflow-id', id, '--input', JSON.stringify(input));
const status = async (id: string) => JSON.parse(await temporal('workflow', 'query', '--workflow-id', id, '--name', 'status')).queryResult[0] as RunStatusView;
const result = (id: string) => cliRunResult(h.client, h.address, id);
const parkedOnC2 = (id: string) => waitFor(`${id} parked on c2`, async () => (await status(id)).interruption?.type === 'approval');
/** A destructive run parked on its delete (c2 of access.log); returns its id and workspace. */
async function parkedRun(tag: string) {
  const ws = freshWorkspace();
  const id = `cl-${tag}-${ws}`;
  // An approval timeout far ahead: the parked run sets AgentAwaitingExpiresAt too.
  await start(id, { task: 'Free some disk space.', model: 'destructive', workspace: ws, approvalTimeoutMs: 3_600_000 });
  await parkedOnC2(id);
  return { id, ws, logFile: join(h.workspaceRoot, ws, 'access.log') };
}

/** The workflow ids `temporal workflow list --query` answers. */
async function listed(query: string): Promise<string[]> {
  const out = (await temporal('workflow', 'list', '--query', query)).trim();
  return out ? (JSON.parse(out) as { execution: { workflowId: string } }[]).map((w) => w.execution.workflowId) : [];
}

describe('the contract through the temporal CLI, on the cluster', () => {
  it('start, status query, approve signal: the delete runs once and the run completes', async () => {
    const { id, logFile } = await parkedRun('approve');
    expect(await status(id)).toMatchObject({ runId: id, status: 'interrupted', interruption: { type: 'approval', callId: 'c2', toolName: 'delete_file', args: { path: 'access.log' } } });
    await temporal('workflow', 'signal', '--workflow-id', id, '--name', 'approve', '--input', JSON.stringify({ callId: 'c2', by: 'alice' }));
    expect(await result(id)).toMatchObject({ runId: id, status: 'completed', turns: 3, toolRuns: 2, output: 'Deleted access.log to free space.' });
    expect(existsSync(logFile)).toBe(false);
    expect(h.trace(id).filter((l) => l.type === 'tool_exec' && l.callId === 'c2')).toHaveLength(1);
  });

  it('reject signal: the reason reaches the transcript, nothing is deleted', async () => {
    const { id, logFile } = await parkedRun('reject');
    await temporal('workflow', 'signal', '--workflow-id', id, '--name', 'reject', '--input', JSON.stringify({ callId: 'c2', reason: 'keep the logs', by: 'bob' }));
    expect((await result(id)).output).toBe('I did not delete anything: you declined the deletion.');
    const transcript = JSON.parse(await temporal('workflow', 'query', '--workflow-id', id, '--name', 'transcript')).queryResult[0] as { content: string }[];
    expect(transcript.some((m) => m.content?.includes('keep the logs'))).toBe(true);
    expect(existsSync(logFile)).toBe(true);
  });

  it('cancel signal mid-tool, and `workflow cancel` while parked: both end interrupted/cancelled', async () => {
    const slow = `cl-cancel-${freshWorkspace()}`;
    await start(slow, { task: 'Scan the archive.', model: 'slow' });
    await waitFor('the scan under way', () => h.trace(slow).some((l) => l.type === 'tool_progress'));
    await temporal('workflow', 'signal', '--workflow-id', slow, '--name', 'cancel', '--input', JSON.stringify({ reason: 'user pressed Stop' }));
    expect(await result(slow)).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'user pressed Stop' } });

    const { id, logFile } = await parkedRun('native-cancel');
    await temporal('workflow', 'cancel', '--workflow-id', id);
    expect(await result(id)).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled' } });
    expect(existsSync(logFile)).toBe(true);
  });

  it('decide update: a call not awaiting a decision is refused; the right one answers with the status', async () => {
    const { id, logFile } = await parkedRun('decide');
    const decide = (input: object) => temporal('workflow', 'update', 'execute', '--workflow-id', id, '--name', 'decide', '--input', JSON.stringify(input));
    await expect(decide({ callId: 'c9', decision: 'approve', by: 'ops' })).rejects.toThrow(/c9/);
    const answer = JSON.parse(await decide({ callId: 'c2', decision: 'approve', by: 'ops' })) as { result: RunStatusView };
    expect(answer.result).toMatchObject({ runId: id, interruption: null });
    expect(await result(id)).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    expect(existsSync(logFile)).toBe(false);
  });

  it('workflow list --query finds runs by each search attribute (AgentErrorType: see the next test)', async () => {
    // Runs that between them set every other attribute: parked (awaiting tool,
    // call and argsHash), completed (exit reason), a sub-agent (parent), a fork.
    const parked = await parkedRun('list-parked');
    const done = `cl-list-done-${freshWorkspace()}`;
    await start(done, { task: 'Which file mentions a timeout?', model: 'plan' });
    const parent = `cl-list-research-${freshWorkspace()}`;
    await start(parent, { task: 'Find out which file mentions a timeout.', model: 'research', tools: ['research'] });
    for (const id of [done, parent]) await h.client.workflow.getHandle<typeof agentRun>(id).result();
    // A fork (its lineage, AgentForkOf) of the finished run.
    const fork = `cl-list-fork-${freshWorkspace()}`;
    await start(fork, { forkFrom: { run: done, atTurn: 1 } });
    await h.client.workflow.getHandle<typeof agentRun>(fork).result();
    const ids = [parked.id, done, parent, `${parent}/m1/r1/research`, fork];

    // Each run's attributes as the server holds them.
    const attrs = new Map<string, Record<string, unknown>>();
    for (const id of ids) {
      const d = await h.client.workflow.getHandle<typeof agentRun>(id).describe();
      attrs.set(id, Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((k) => [k, d.searchAttributes[k]?.[0]])));
    }
    const list = (query: string) => listed(`TaskQueue = "${h.taskQueue}" AND ${query}`);

    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES).filter(([n]) => n !== 'AgentErrorType')) {
      const holder = ids.find((id) => attrs.get(id)?.[name] !== undefined);
      expect(holder, `no run set ${name}`).toBeDefined();
      const value = attrs.get(holder!)![name];
      // Keyword and Int by equality; Double by range (its text form is not exact);
      // Text by a word of it: PostgreSQL visibility casts the text to a tsvector
      // as is, so a word matches a whitespace-separated token exactly.
      const tokens = (v: unknown) => (typeof v === 'string' ? v.split(/\s+/) : []);
      const word = tokens(value).find((w) => /^[A-Za-z]{4,}$/.test(w)) ?? String(value);
      const [query, matches] =
        type === 'Double' ? [`${name} >= ${Number(value) / 2}`, (v: unknown) => typeof v === 'number' && v >= Number(value) / 2]
        : type === 'Text' ? [`${name} = "${word}"`, (v: unknown) => tokens(v).includes(word)]
        : type === 'Int' ? [`${name} = ${String(value)}`, (v: unknown) => v === value]
        : type === 'Datetime' ? [`${name} = "${(value as Date).toISOString()}"`, (v: unknown) => v instanceof Date && v.getTime() === (value as Date).getTime()]
        : [`${name} = "${String(value)}"`, (v: unknown) => v === value];
      const want = ids.filter((id) => matches(attrs.get(id)?.[name])).sort();
      // Visibility is written asynchronously: wait for the rows, then compare exactly.
      const got = await waitFor(`list --query '${query}' to show ${want.join(', ')}`, async () => {
        const rows = (await list(query)).filter((id) => ids.includes(id)).sort();
        return want.every((id) => rows.includes(id)) ? rows : null;
      });
      expect({ query, got }).toEqual({ query, got: want });
    }
    await temporal('workflow', 'signal', '--workflow-id', parked.id, '--name', 'reject', '--input', JSON.stringify({ callId: 'c2', reason: 'done listing' }));
    await h.client.workflow.getHandle<typeof agentRun>(parked.id).result();
  });

  // A harness bug on PostgreSQL visibility (the compose stack's): a failed
  // run's AgentExitReason reads "Activity task failed: the model provider
  // answered 401: …", and PostgreSQL's visibility schema casts Text attributes
  // with `::tsvector`, which takes "failed:" for a lexeme with positions and
  // refuses the value ("syntax error in tsvector"). The whole visibility row
  // of the close is refused: the failed run stays RUNNING in `workflow list`
  // and no AgentErrorType query finds it (temporalio/temporal PR #11085 fixes
  // the schema; the harness can avoid it by keeping ':' out of Text values).
  // Marked as failing so that it is seen: when the fix lands, this fails and
  // the mark goes.
  let failed = '';
  it('a provider 401 ends the run failed, with its error type on the run', async () => {
    const m = marker();
    await addFault(h.providerUrl, { match: { taskIncludes: m }, fault: { type: 'status', status: 401, message: 'Incorrect API key provided.' }, times: 1 });
    failed = `cl-list-failed-${freshWorkspace()}`;
    await start(failed, { task: `Which file mentions a timeout? ${m}`, model: 'plan' });
    expect(await result(failed)).toMatchObject({ status: 'failed', errorType: 'ProviderUnauthorized' });
    const d = await h.client.workflow.getHandle<typeof agentRun>(failed).describe();
    expect(d.searchAttributes.AgentErrorType).toEqual(['ProviderUnauthorized']);
    // PostgreSQL's `::tsvector` refuses ':' and quotes (and the whole row with them): the reason is stored without them.
    expect(String(d.searchAttributes.AgentExitReason?.[0])).toMatch(/^Activity task failed the model provider answered 401/);
  });

  it('that failed run is listed closed, by AgentErrorType (its AgentExitReason has no character ::tsvector refuses)', { timeout: 60_000 }, async () => {
    expect(failed).not.toBe('');
    // A closed run's row is written within a second or two on this cluster; 30 s is a safety net.
    await waitFor('the failed run listed by its error type', async () =>
      (await listed(`TaskQueue = "${h.taskQueue}" AND AgentErrorType = "ProviderUnauthorized" AND ExecutionStatus = "Completed"`)).includes(failed), 30_000);
  });
});
