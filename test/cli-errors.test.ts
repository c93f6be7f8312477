// The CLI's refusals as a person meets them: one line naming the flag (or
// the limit to raise) and exit 2 before any run starts; `resume` of a run
// that does not exist exits 6; a resume that would stop at once is refused;
// a resume of a run nobody approved in time says it will ask again and how
// to change the timeout.
import { WorkflowNotFoundError } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES, NOT_FOUND, USAGE_ERROR } from '../client/exit-codes.js';
import { statusQuery } from '../common/run-messages.js';
import { freshWorkspace, useHarness, waitFor } from './helpers/harness.js';
import { isDocumented } from './helpers/documented.js';
import type { agentRun } from '../workflows/index.js';

const h = useHarness();
const exec = promisify(execFile);
const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');

const cli = (...args: string[]) =>
  exec(bin, args, { env: { ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir }, timeout: 90_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

/** Whether a run with this id was ever started. */
async function started(id: string): Promise<boolean> {
  return h.client.workflow.getHandle<typeof agentRun>(id).describe().then(
    () => true,
    (err: unknown) => {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    },
  );
}

describe('run: flags are checked before a run starts', () => {
  it.each([
    [['--tool-errors', 'loud'], '--tool-errors must be one of describe | generic | fatal, got "loud"'],
    [['--dedupe', 'sometimes'], '--dedupe must be one of readOnly | off | all, got "sometimes"'],
    [['--max-turns', 'none', '--budget', 'none'], '--max-turns none and --budget none together leave a run no exit but the model: keep one of the two limits'],
    [['--workspace', '../etc'], '--workspace must be one folder name of letters, digits, ".", "_" or "-" (not starting with "."), got "../etc"'],
    [['--task', ''], '--task is required and must be a non-empty string'],
    [['--input', '{"task":"t","limits":{"maxTurns":-3}}'], '--input: limits.maxTurns must be a positive integer or null, got -3'],
    [['--input', '{"task":"t","colour":"red"}'], '--input: colour is not a known field'],
    [['--turns', '3'], "Unknown option '--turns'"],
    // A negative number is the flag's value, refused by its check (not "argument is ambiguous").
    [['--max-turns', '-3'], '--max-turns must be a positive whole number or "none", got "-3"'],
    [['--budget', '-1'], '--budget must be a positive number or "none", got "-1"'],
  ])('run %j: one line naming the flag, exit 2, no run', async (args, problem) => {
    const id = `flags-${freshWorkspace()}`;
    const r = await cli('run', ...args, '--id', id);
    expect(r.code).toBe(USAGE_ERROR);
    expect(r.stderr.startsWith(`agent-harness run: ${problem}`)).toBe(true);
    expect(r.stderr.trimEnd()).toMatch(/\(see agent-harness run --help\)$/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(isDocumented(r.stderr)).toBe(true);
    expect(await started(id)).toBe(false);
  });

  it('run --tools nope: refused before any run starts, naming the tool and what the queue\'s workers offer (issue 34, 5f), also with --detach', async () => {
    // The queue's workers offer the built-in set (their identity's tool-set hash says so): checked before the start.
    for (const detach of [[], ['--detach']]) {
      const id = `tools-${freshWorkspace()}`;
      const r = await cli('run', '--tools', 'list_files,nope', '--id', id, ...detach);
      expect(r.code).toBe(USAGE_ERROR);
      expect(r.stderr).toBe(`agent-harness run: --tools names an unknown tool "nope"; the workers of task queue ${h.taskQueue} offer list_files, read_file, delete_file, scan_archive, research (see agent-harness run --help)\n`);
      expect(isDocumented(r.stderr)).toBe(true);
      // No FAILED workflow left behind.
      expect(await started(id)).toBe(false);
    }
  });

  it('list --limit -1 and raise-budget --to -1: one line naming the flag, exit 2', async () => {
    const limit = await cli('list', '--limit', '-1');
    expect(limit.code).toBe(USAGE_ERROR);
    expect(limit.stderr.trim()).toBe('agent-harness list: --limit must be a positive whole number, got "-1" (see agent-harness list --help)');
    const raise = await cli('raise-budget', 'some-run', '--to', '-1');
    expect(raise.code).toBe(USAGE_ERROR);
    expect(raise.stderr.trim()).toBe('agent-harness raise-budget: --to must be a positive number, got "-1" (see agent-harness raise-budget --help)');
  });

  it('reject --help says the reason is optional', async () => {
    const r = await cli('reject', '--help');
    expect(r.stdout).toBe(
      'usage: agent-harness reject <workflowId> <callId> [--reason TEXT] [--by NAME] [--args-hash H] [--call-key K] [--tool NAME] [--key FILE [--expires-in-ms MS]] [--when-worker-returns]\n' +
        '  the reason is optional; the model is told it when given. With no worker: as approve (--when-worker-returns sends the reject signal)\n',
    );
  });
});

describe('fork: flags are checked against the source before a run starts', () => {
  it('a turn past the end, a turn whose call has no result, a lifted last limit: one line naming the flag, exit 2, no run', { timeout: 120_000 }, async () => {
    const ws = freshWorkspace();
    const capped = `fork-src-${ws}`;
    expect((await cli('run', '--model', 'runaway', '--max-turns', 'none', '--budget', '0.001', '--id', capped)).code).toBe(EXIT_CODES.budget_exceeded);
    const turns = (await h.client.workflow.getHandle<typeof agentRun>(capped).result()).turns;
    const parked = `fork-parked-${ws}`;
    expect((await cli('run', '--model', 'destructive', '--workspace', ws, '--approval-timeout-ms', '300', '--id', parked)).code).toBe(EXIT_CODES.interrupted);

    const cases: [string[], string][] = [
      [[capped, '--at-turn', String(turns + 5)], `--at-turn ${turns + 5}: the source has ${turns} turn${turns === 1 ? '' : 's'}, so atTurn ${turns + 5} is past its end`],
      [[parked, '--at-turn', '2'], '--at-turn 2: turn 2 is not finished in the source: delete_file call c2 has no result (the source is parked on it or stopped before running it); fork at turn 1, or decide the call in the source first'],
      [[capped, '--at-turn', '1', '--budget', 'none'], '--budget none would leave the run no exit but the model: it has no turn cap either; give --max-turns N too, or keep a budget'],
      [[capped, '--at-turn', '1', '--max-turns', 'none', '--budget', 'none'], '--max-turns none and --budget none together leave a run no exit but the model: keep one of the two limits'],
    ];
    for (const [i, [args, problem]] of cases.entries()) {
      const r = await cli('fork', ...args, '--id', `fork-${i}-${ws}`);
      expect(r.code, r.stderr).toBe(USAGE_ERROR);
      expect(r.stderr).toBe(`agent-harness fork: ${problem} (see agent-harness fork --help)\n`);
      expect(isDocumented(r.stderr)).toBe(true);
      expect(await started(`fork-${i}-${ws}`)).toBe(false);
    }
    const none = await cli('fork', `nope-${ws}`, '--at-turn', '1');
    expect(none.code).toBe(NOT_FOUND);
    expect(none.stderr).toBe(`no such run: nope-${ws}\n`);
  });
});

describe('no server', () => {
  it('a command that needs the server names the address and what to check, exit 2', async () => {
    const r = await exec(bin, ['status', 'some-run'], { env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' }, timeout: 60_000 }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(r?.code).toBe(USAGE_ERROR);
    // Nothing listens on port 1: the host refuses, which is not a server slow to answer.
    expect(r?.stderr).toBe('agent-harness: no Temporal server answers at 127.0.0.1:1 (TEMPORAL_ADDRESS): connection refused; check that the server is running and that TEMPORAL_ADDRESS names it\n');
    expect(isDocumented(r?.stderr ?? '')).toBe(true);
  });

  /** The CLI's status against an address, to its end: exit code, stderr, how long it took. */
  const statusAt = async (address: string) => {
    const t0 = Date.now();
    const r = await exec(bin, ['status', 'some-run'], { env: { ...process.env, TEMPORAL_ADDRESS: address }, timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    return { ...r, ms: Date.now() - t0 };
  };

  it('an unresolvable host is named as such, at once, not "no answer in time" (issue 34, 5h)', async () => {
    // .invalid never resolves (RFC 2606).
    const r = await statusAt('no-such-host.invalid:7233');
    expect(r.code).toBe(USAGE_ERROR);
    expect(r.stderr).toBe('agent-harness: cannot reach the Temporal server at no-such-host.invalid:7233 (TEMPORAL_ADDRESS): the host name does not resolve; check the host name in TEMPORAL_ADDRESS\n');
    expect(r.ms).toBeLessThan(5_000);
    expect(isDocumented(r.stderr)).toBe(true);
  });

  it('an address answering HTTP, or gRPC that is not Temporal, is named as not a Temporal frontend (issue 34, 5h)', async () => {
    const web = createServer((_req, res) => res.end('hello'));
    const grpc = new GrpcServer();
    try {
      const webPort = await new Promise<number>((resolve) => web.listen(0, '127.0.0.1', () => resolve((web.address() as AddressInfo).port)));
      const grpcPort = await new Promise<number>((resolve, reject) => grpc.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
      const http = await statusAt(`127.0.0.1:${webPort}`);
      expect(http.code).toBe(USAGE_ERROR);
      expect(http.stderr).toBe(`agent-harness: the server at 127.0.0.1:${webPort} (TEMPORAL_ADDRESS) is not a Temporal frontend: it answers HTTP/1.1, not gRPC; check that TEMPORAL_ADDRESS names the Temporal server's gRPC port (7233 by default), not its Web UI or HTTP API port\n`);
      expect(isDocumented(http.stderr)).toBe(true);
      const other = await statusAt(`127.0.0.1:${grpcPort}`);
      expect(other.code).toBe(USAGE_ERROR);
      expect(other.stderr).not.toMatch(/Failed to describe workflow/);
      expect(other.stderr).toBe(`agent-harness: the server at 127.0.0.1:${grpcPort} (TEMPORAL_ADDRESS) is not a Temporal frontend: it answers gRPC but does not implement temporal.api.workflowservice.v1.WorkflowService; check that TEMPORAL_ADDRESS names the Temporal server's gRPC port (7233 by default), not its Web UI or HTTP API port\n`);
      expect(isDocumented(other.stderr)).toBe(true);
    } finally {
      web.close();
      grpc.forceShutdown();
    }
  });
});

describe('resume', () => {
  it('of a run that does not exist exits 6', async () => {
    const r = await cli('resume', 'nope');
    expect(r.code).toBe(NOT_FOUND);
    expect(r.stderr).toBe('no such run: nope\n');
    expect(isDocumented(r.stderr)).toBe(true);
  });

  it('of a run stopped at its turn cap needs a higher cap: refused, naming the flag, before any run starts', async () => {
    const id = `cap-${freshWorkspace()}`;
    expect((await cli('run', '--model', 'runaway', '--max-turns', '2', '--id', id)).code).toBe(EXIT_CODES.max_turns_exceeded);
    const same = await cli('resume', id, '--id', `${id}-again`);
    expect(same.code).toBe(USAGE_ERROR);
    expect(same.stderr).toBe(`agent-harness resume: run ${id} stopped at its turn cap after 2 turns: give a higher cap, e.g. --max-turns 4 (or none) (see agent-harness resume --help)\n`);
    const notHigher = await cli('resume', id, '--max-turns', '2', '--id', `${id}-again`);
    expect(notHigher.code).toBe(USAGE_ERROR);
    expect(notHigher.stderr).toBe(`agent-harness resume: --max-turns 2 does not raise the cap: run ${id} has taken 2 turns; give more than 2 (or none) (see agent-harness resume --help)\n`);
    expect([same.stderr, notHigher.stderr].every(isDocumented)).toBe(true);
    expect(await started(`${id}-again`)).toBe(false);
    const raised = await cli('resume', id, '--max-turns', '4');
    expect(raised.code).toBe(EXIT_CODES.max_turns_exceeded);
    expect(raised.stdout).toMatch(/^turns=4 /m);
  });

  it('of a run stopped at its budget needs a higher budget', async () => {
    const id = `budget-${freshWorkspace()}`;
    expect((await cli('run', '--model', 'runaway', '--budget', '0.001', '--id', id)).code).toBe(EXIT_CODES.budget_exceeded);
    const spent = (await h.client.workflow.getHandle<typeof agentRun>(id).result()).costUsd;
    const r = await cli('resume', id, '--id', `${id}-again`);
    expect(r.code).toBe(USAGE_ERROR);
    expect(r.stderr.startsWith(`agent-harness resume: run ${id} stopped at its budget after spending $${spent.toFixed(6)}: give a higher budget, e.g. --budget `)).toBe(true);
    expect(r.stderr).toMatch(/--budget \d+(\.\d+)? \(or none\) \(see agent-harness resume --help\)\n$/);
    expect(isDocumented(r.stderr)).toBe(true);
    expect(await started(`${id}-again`)).toBe(false);
  });

  it('that would lift the one limit the run has left is refused before any run starts, naming the flag', async () => {
    const id = `nolimit-${freshWorkspace()}`;
    expect((await cli('run', '--model', 'runaway', '--max-turns', 'none', '--budget', '0.001', '--id', id)).code).toBe(EXIT_CODES.budget_exceeded);
    const both = await cli('resume', id, '--max-turns', 'none', '--budget', 'none', '--id', `${id}-both`);
    expect(both.code).toBe(USAGE_ERROR);
    expect(both.stderr).toBe('agent-harness resume: --max-turns none and --budget none together leave a run no exit but the model: keep one of the two limits (see agent-harness resume --help)\n');
    // The run has no turn cap: lifting its budget would leave it none.
    const budget = await cli('resume', id, '--budget', 'none', '--id', `${id}-budget`);
    expect(budget.code).toBe(USAGE_ERROR);
    expect(budget.stderr).toBe('agent-harness resume: --budget none would leave the run no exit but the model: it has no turn cap either; give --max-turns N too, or keep a budget (see agent-harness resume --help)\n');
    expect([both.stderr, budget.stderr].every(isDocumented)).toBe(true);
    for (const again of ['both', 'budget']) expect(await started(`${id}-${again}`)).toBe(false);
  });

  it('of a run nobody approved in time: says it asks again and how to change the timeout; a longer timeout lets a person approve', { timeout: 120_000 }, async () => {
    const ws = freshWorkspace();
    const id = `timeout-${ws}`;
    const first = await cli('run', '--model', 'destructive', '--workspace', ws, '--approval-timeout-ms', '300', '--id', id);
    expect(first.code).toBe(EXIT_CODES.interrupted);

    const again = await cli('resume', id, '--id', `${id}-2`, '--detach');
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(
      `run ${id} stopped because nobody decided on delete_file call c2 in time; the new run asks again with the same approval timeout (300 ms): pass --approval-timeout-ms MS (or none) to change it\n`,
    );
    expect(isDocumented(again.stderr)).toBe(true);
    // The same 300 ms: it stops the same way.
    expect((await h.client.workflow.getHandle<typeof agentRun>(`${id}-2`).result()).interruption).toMatchObject({ type: 'approval', callId: 'c2' });

    const longer = await cli('resume', id, '--id', `${id}-3`, '--approval-timeout-ms', '600000', '--detach');
    expect(longer.stderr).toBe(`run ${id} stopped because nobody decided on delete_file call c2 in time; the new run asks again and waits up to 600000 ms for a decision\n`);
    expect(isDocumented(longer.stderr)).toBe(true);
    await waitFor('the resumed run to park on c2', async () => (await h.client.workflow.getHandle<typeof agentRun>(`${id}-3`).query(statusQuery)).interruption?.type === 'approval');
    expect((await cli('approve', `${id}-3`, 'c2')).code).toBe(0);
    expect((await h.client.workflow.getHandle<typeof agentRun>(`${id}-3`).result()).status).toBe('completed');
  });
});
