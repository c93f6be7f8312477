// `agent-harness approve --query '<visibility query>'`: one command decides
// every parked run a query names. The attacker's (and the tired operator's)
// ways to make it decide more than meant: a query that also names runs that
// are not parked, an empty query, a quote or parenthesis that would break out
// of the bound the command puts around the query (`' OR 1=1`,
// `x") OR ("1"="1`), a query the server cannot parse, and an unsigned batch
// over runs whose policy asks for a signature. Each checks that the runs
// outside the query keep their file and stay parked, and that the refusal
// names what is wrong.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { statusQuery } from '../../common/run-messages.js';
import { newKeyPair, type ApproverPolicy } from '../../common/signed-decision.js';
import { main } from '../../client/cli.js';
import { boundedQuery, queryShapeProblem } from '../../client/batch-decisions.js';
import { boundedAnswer } from '../../client/worker-check.js';
import type { agentRun } from '../../workflows/index.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from '../helpers/harness.js';

const h = useHarness();
const alice = newKeyPair();
const policy: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_file: ['alice'] } };

type Run = WorkflowHandle<typeof agentRun>;

/** Runs `agent-harness ARGS` in-process; what it printed (stdout and stderr) and its exit code. */
async function cli(args: string[]): Promise<{ code: number; said: string }> {
  let said = '';
  const out = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void (said += `${a.join(' ')}\n`));
  const err = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void (said += `${a.join(' ')}\n`));
  try {
    return { code: await main(args, h.client), said };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** A `destructive` run parked on its delete of access.log, on `taskQueue`. */
async function parked(workflowId: string, taskQueue = h.taskQueue): Promise<{ handle: Run; ws: string }> {
  const ws = freshWorkspace();
  const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId, args: [{ task: 'Clean up the workspace.', model: 'destructive', workspace: ws }] });
  if (taskQueue !== h.taskQueue) h.track(workflowId);
  await waitForApproval(handle, 'c2');
  return { handle, ws };
}

/** Visibility is eventually consistent: wait until it lists `n` parked runs for `query`. */
async function listed(query: string, n: number): Promise<void> {
  await waitFor(`${n} parked runs listed for ${query}`, async () => (await h.client.workflow.count(`AgentStatus = "awaiting_approval" AND ${query}`)).count === n || null);
}

const accessLog = (ws: string) => join(h.workspaceRoot, ws, 'access.log');

async function stillParked(run: { handle: Run; ws: string }): Promise<void> {
  expect(await run.handle.query(statusQuery)).toMatchObject({ interruption: { type: 'approval', callId: 'c2' } });
  expect(existsSync(accessLog(run.ws))).toBe(true);
}

async function deleted(run: { handle: Run; ws: string }): Promise<void> {
  expect(await run.handle.result()).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
  expect(existsSync(accessLog(run.ws))).toBe(false);
}

describe('approve --query', () => {
  const tag = `batch-${randomUUID().slice(0, 8)}`;
  let inside: { handle: Run; ws: string }[] = [];
  let outside: { handle: Run; ws: string };

  beforeAll(async () => {
    inside = await Promise.all([0, 1, 2].map((i) => parked(`${tag}-in-${i}`)));
    outside = await parked(`${tag}-out`);
    await listed(`WorkflowId STARTS_WITH "${tag}-"`, 4);
  });

  it('refuses an empty query, an open quote (`\' OR 1=1`) and a parenthesis that would break out of its bound, deciding nothing', async () => {
    for (const [query, why] of [
      ['', /--query is empty/],
      ['   ', /--query is empty/],
      ["' OR 1=1", /--query leaves a ' string open/],
      [`WorkflowId = "nothing") OR ("1" = "1`, /--query closes a parenthesis it did not open/],
      [`(WorkflowId STARTS_WITH "${tag}-"`, /--query leaves 1 parenthesis open/],
    ] as const) {
      const r = await cli(['approve', '--query', query, '--by', 'mallory']);
      expect(r.code, `${query}: ${r.said}`).toBe(2);
      expect(r.said).toMatch(why);
    }
    // Flags that would bind one call do not go with a batch, nor does a workflow id.
    expect((await cli(['approve', `${tag}-in-0`, 'c2', '--query', `WorkflowId = "${tag}-in-0"`])).said).toMatch(/--query names the runs: give no workflowId/);
    expect((await cli(['approve', '--query', `WorkflowId = "${tag}-in-0"`, '--args-hash', 'a'.repeat(64)])).said).toMatch(/--args-hash does not go with --query/);
    expect((await cli(['reject', '--query', `WorkflowId = "${tag}-in-0"`])).said).toMatch(/--query is for approve only/);
    expect((await cli(['approve', '--query', `WorkflowId = "${tag}-in-0"`, '--concurrency', '0'])).said).toMatch(/--concurrency must be a whole number from 1 to 1000/);
    for (const run of [...inside, outside]) await stillParked(run);
  });

  it('a query the server cannot parse is refused with the server\'s reason and the query sent; nothing decided', async () => {
    const r = await cli(['approve', '--query', 'WorkflowId === 1 1', '--by', 'mallory']);
    expect(r.code, r.said).toBe(2);
    expect(r.said).toMatch(/--query: the visibility query was refused by the server: .*\(query sent: .*AgentStatus = "awaiting_approval" AND \(WorkflowId === 1 1\)\)/);
    for (const run of [...inside, outside]) await stillParked(run);
  });

  it('a query naming only runs that are not parked (finished, or no such run) decides nothing and says so', async () => {
    const done = await h.start({ task: 'Which file mentions a timeout?', model: 'plan' }, `${tag}-finished`);
    await done.result();
    const r = await cli(['approve', '--query', `WorkflowId = "${tag}-finished" OR WorkflowId = "${tag}-nobody"`, '--by', 'ops']);
    expect(r.code).toBe(1);
    expect(r.said).toMatch(/no run parked on an approval matches the query: nothing was decided/);
    for (const run of [...inside, outside]) await stillParked(run);
  });

  it('approves every parked run the query names, each bound to its own parked call, and no other', async () => {
    const r = await cli(['approve', '--query', `WorkflowId STARTS_WITH "${tag}-in-"`, '--by', 'alice']);
    expect(r.said).toMatch(/approved 3 of 3 parked runs matching the query/);
    expect(r.code).toBe(0);
    for (const run of inside) await deleted(run);
    await stillParked(outside);
    // The decision is on record per run, by the name given.
    const decided = h.trace(inside[0].handle.workflowId).find((l) => l.type === 'approval_decided');
    expect(decided).toMatchObject({ decision: 'approve', by: 'alice' });
  });
});

describe('approve --query on runs whose policy asks for a signature', () => {
  const queue = `batch-signed-${randomUUID().slice(0, 8)}`;
  const tag = `batch-signed-${randomUUID().slice(0, 8)}`;
  let worker: { shutdown(): Promise<void> };
  const dir = mkdtempSync(join(tmpdir(), 'batch-signed-'));
  const keyFile = join(dir, 'alice.key');

  beforeAll(async () => {
    writeFileSync(keyFile, `# test key\n${alice.privateKey}\n`, { mode: 0o600 });
    worker = await h.startWorker({ taskQueue: queue, runDefaults: { approvers: policy } });
  });
  afterAll(async () => {
    await worker.shutdown();
  });

  it('an unsigned batch is refused by each run (it names the signature), and a batch signed with the key is taken, signed per run', async () => {
    const runs = await Promise.all([0, 1].map((i) => parked(`${tag}-${i}`, queue)));
    await listed(`WorkflowId STARTS_WITH "${tag}-"`, 2);
    const unsigned = await cli(['approve', '--query', `WorkflowId STARTS_WITH "${tag}-"`, '--by', 'alice']);
    expect(unsigned.code, unsigned.said).toBe(1);
    expect(unsigned.said).toMatch(/approved 0 of 2 parked runs matching the query \(0 recorded pending, 2 refused, 0 not sent\)/);
    expect(unsigned.said).toMatch(/refused: .*c2: .*sign/i);
    for (const run of runs) await stillParked(run);
    const signed = await cli(['approve', '--query', `WorkflowId STARTS_WITH "${tag}-"`, '--by', 'alice', '--key', keyFile]);
    expect(signed.said).toMatch(/approved 2 of 2/);
    expect(signed.code).toBe(0);
    for (const run of runs) await deleted(run);
  });
});

describe('the bound put around a query (unit)', () => {
  it('balances quotes and parentheses, escapes included', () => {
    expect(queryShapeProblem('AgentAwaitingTool = "delete_file" AND (WorkflowId = "a" OR WorkflowId = "b")')).toBeNull();
    expect(queryShapeProblem('WorkflowId = "a)"')).toBeNull();
    expect(queryShapeProblem('WorkflowId = "a\\")" OR ("1"="1')).toMatch(/leaves a " string open|parenthesis/);
    expect(queryShapeProblem("' OR 1=1")).toMatch(/leaves a ' string open/);
    expect(boundedQuery('WorkflowId = "a"')).toBe('WorkflowType = "agentRun" AND ExecutionStatus = "Running" AND AgentStatus = "awaiting_approval" AND (WorkflowId = "a")');
  });
});

describe('one bounded answer that takes many requests', () => {
  it('an answer that polls 50 times under its deadline (a slow update\'s long polls) raises no listener-leak warning, and its deadline still cuts it off', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const polls = async () => {
        for (let i = 0; i < 50; i++) await h.client.workflowService.getSystemInfo({});
        return 'answered';
      };
      expect(await boundedAnswer(h.client, 60_000, polls)).toBe('answered');
      // The deadline still reaches the requests: a long poll on a queue nobody feeds is cut off.
      const longPoll = () => h.client.connection.withDeadline(Date.now() + 30_000, () => h.client.workflowService.pollWorkflowTaskQueue({ namespace: 'default', taskQueue: { name: `nobody-${randomUUID()}` } }));
      expect(await boundedAnswer(h.client, 300, longPoll)).toBe('no-answer');
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.includes('MaxListenersExceeded'))).toEqual([]);
  });
});
