// The contract as ops tooling uses it: the real `temporal` CLI starts, queries,
// signals and awaits a run; our own CLI runs one and exits with its status.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findTemporalCli } from '../worker/dev-server/temporal-cli.js';
import { ALREADY_FINISHED, EXIT_CODES, NOT_FOUND, USAGE_ERROR } from '../client/exit-codes.js';
import type { RunStatusView } from '../common/contract.js';
import { resolveTraceFile } from '../node/trace-format.js';
import { freshWorkspace, useHarness, waitFor } from './helpers/harness.js';
import type { agentRun } from '../workflows/index.js';
import { cliRunResult } from './helpers/temporal-cli.js';

const h = useHarness();
const exec = promisify(execFile);

async function temporal(...args: string[]): Promise<string> {
  const { stdout } = await exec(findTemporalCli(), [...args, '--address', h.address, '--output', 'json'], { timeout: 30_000 });
  return stdout;
}

describe('driven by the real temporal CLI', () => {
  it('workflow start, query status, signal approve, result', async () => {
    const ws = freshWorkspace();
    const id = `cli-${ws}`;
    const input = { task: 'Which file mentions a timeout?', model: 'destructive', workspace: ws, limits: { maxTurns: 20, maxBudgetUsd: 0.05 } };
    await temporal('workflow', 'start', '--type', 'agentRun', '--task-queue', h.taskQueue, '--workflow-id', id, '--input', JSON.stringify(input));

    const status = await waitFor('the run to park on c2', async () => {
      const s = JSON.parse(await temporal('workflow', 'query', '--workflow-id', id, '--name', 'status')).queryResult[0] as RunStatusView;
      return s.interruption?.type === 'approval' ? s : null;
    });
    expect(status).toMatchObject({ runId: id, status: 'interrupted', interruption: { type: 'approval', callId: 'c2', toolName: 'delete_file', args: { path: 'access.log' } } });

    await temporal('workflow', 'signal', '--workflow-id', id, '--name', 'approve', '--input', JSON.stringify({ callId: 'c2', by: 'alice' }));
    const result = await cliRunResult(h.client, h.address, id);
    expect(result).toMatchObject({ runId: id, status: 'completed', turns: 3, toolRuns: 2, output: 'Deleted access.log to free space.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
  });

  it('workflow update execute decide rejects; the transcript query shows the reason', async () => {
    const ws = freshWorkspace();
    const id = `cli-${ws}`;
    await temporal('workflow', 'start', '--type', 'agentRun', '--task-queue', h.taskQueue, '--workflow-id', id,
      '--input', JSON.stringify({ task: 'Tidy up.', model: 'destructive', workspace: ws }));
    await waitFor('the run to park on c2', async () => {
      const s = JSON.parse(await temporal('workflow', 'query', '--workflow-id', id, '--name', 'status')).queryResult[0] as RunStatusView;
      return s.interruption?.type === 'approval';
    });
    await temporal('workflow', 'update', 'execute', '--workflow-id', id, '--name', 'decide',
      '--input', JSON.stringify({ callId: 'c2', decision: 'reject', reason: 'keep the logs', by: 'ops' }));
    const result = await cliRunResult(h.client, h.address, id);
    expect(result.output).toBe('I did not delete anything: you declined the deletion.');
    const transcript = JSON.parse(await temporal('workflow', 'query', '--workflow-id', id, '--name', 'transcript')).queryResult[0] as { content: string }[];
    expect(transcript.some((m) => m.content?.includes('keep the logs'))).toBe(true);
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
  });
});

describe('the agent-harness CLI', () => {
  const env = () => ({ ...process.env, TEMPORAL_ADDRESS: h.address, AGENT_TASK_QUEUE: h.taskQueue, TRACE_DIR: h.traceDir });
  const bin = join(import.meta.dirname, '..', 'bin', 'agent-harness.mjs');

  it('run follows the steps, prints the summary line, and exits with the code of the exit', async () => {
    const res = await exec(bin, ['run', '--model', 'runaway', '--max-turns', '3', '--id', `cli-runaway-${freshWorkspace()}`], { env: env(), timeout: 60_000 }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(res.code).toBe(EXIT_CODES.max_turns_exceeded);
    expect(res.stdout).toMatch(/turn 1: in=\d+ out=\d+ cost=\$0\.\d{6} finish=tool_calls/);
    expect(res.stdout).toMatch(/→ list_files \{\}/);
    expect(res.stdout).toMatch(/^turns=3 tools=1 in=\d+ out=\d+ cost=\$0\.\d{6} ms=\d+ status=max_turns_exceeded$/m);
  });

  it('run exits 0 on completion, and 2 on bad input naming the field before any run starts', async () => {
    const ok = await exec(bin, ['run', '--model', 'plan', '--debug'], { env: env(), timeout: 60_000 });
    expect(ok.stdout).toContain('answer: errors.log mentions a timeout');
    // --debug prints each request before it is sent, messages numbered.
    expect(ok.stdout).toMatch(/┌ request plan: tools=list_files,read_file,delete_file,scan_archive, 1 messages\n {2}│ 1 user: /);
    expect(ok.stdout).toMatch(/│ 3 tool\[c1\]: access\.log \(\d+ bytes\)/);
    expect(ok.stdout).toMatch(/status=completed$/m);
    const bad = await exec(bin, ['run', '--input', '{"task":"t","limits":{"maxTurns":-3}}'], { env: env(), timeout: 60_000 }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad?.code).toBe(USAGE_ERROR);
    expect(bad?.stderr).toContain('--input: limits.maxTurns');
  });

  it.each([
    ['--max-turns', '10x'],
    ['--max-turns', '-3'],
    ['--budget', 'abc'],
    ['--approval-timeout-ms', 'soon'],
  ])('run %s %s is a usage error naming the flag (exit 2): a mistyped limit never removes the limit', async (flag, value) => {
    const bad = await exec(bin, ['run', `${flag}=${value}`], { env: env(), timeout: 60_000 }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad?.code).toBe(2);
    expect(bad?.stderr).toContain(`${flag} must be a positive`);
  });

  const outcome = (args: string[], extraEnv: Record<string, string> = {}) =>
    exec(bin, args, { env: { ...env(), ...extraEnv }, timeout: 60_000 }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('every command has --help, answered without a server', async () => {
    // A server address nobody answers on: help must not try to connect.
    for (const command of ['run', 'approve', 'reject', 'steer', 'cancel', 'status', 'trace', 'list']) {
      const r = await outcome([command, '--help'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
      expect(r.code, command).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: agent-harness ${command}\\b`));
    }
  });

  it('no such run exits 6, an already finished run exits 7, and reading a trace file needs no server', async () => {
    const missing = await outcome(['trace', 'no-such-run'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(missing.code).toBe(NOT_FOUND);
    expect(missing.stderr).toContain('no trace for no-such-run');
    expect((await outcome(['status', `no-such-run-${freshWorkspace()}`])).code).toBe(NOT_FOUND);
    const id = `cli-done-${freshWorkspace()}`;
    expect((await outcome(['run', '--model', 'plan', '--id', id])).code).toBe(0);
    // A trace file by its path, with no server and no TRACE_DIR: the same lines as by the run's id.
    const byId = (await outcome(['trace', id])).stdout;
    const file = resolveTraceFile(h.traceDir, id);
    const byFile = await exec(bin, ['trace', file], { env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1', TRACE_DIR: '' }, timeout: 60_000 });
    expect(byFile.stdout).toBe(byId);
    expect(byFile.stdout).toContain('"type":"run_stopped"');
    const noFile = await outcome(['trace', `${file}.gone.jsonl`], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(noFile.code).toBe(NOT_FOUND);
    expect(noFile.stderr).toContain('no trace file');
    const late = await outcome(['approve', id, 'c2']);
    expect(late.code).toBe(ALREADY_FINISHED);
    expect(late.stderr).toContain('already finished');
    expect((await outcome(['cancel', id])).code).toBe(ALREADY_FINISHED);
  });

  it('result of a run that failed outright prints its error and type and exits 1, like a failed result', async () => {
    const id = `cli-badinput-${freshWorkspace()}`;
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: h.taskQueue, workflowId: id, args: [{ task: 'x', limits: { maxTurns: -1 } }] });
    await handle.result().catch(() => undefined);
    const r = await outcome(['result', id]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ workflowId: id, status: 'failed', agentStatus: 'failed', errorType: 'InvalidInput', error: expect.stringContaining('invalid input: limits.maxTurns') });
  });

  it('piping run into head ends quietly; costs print without float noise', async () => {
    const r = await exec('bash', ['-o', 'pipefail', '-c', `"${bin}" run --model runaway --max-turns 12 | head -n 2`], { env: env(), timeout: 60_000 });
    expect(r.stdout.trim().split('\n')).toHaveLength(2);
    expect(r.stderr).not.toMatch(/EPIPE|Error/);
    const id = `cli-cost-${freshWorkspace()}`;
    await outcome(['run', '--model', 'runaway', '--max-turns', '7', '--id', id]);
    const status = (await outcome(['status', id])).stdout;
    expect(status).not.toMatch(/\d\.\d{13,}/);
  });

  it('a run parked on a person is found as awaiting_approval, with its tool and call; list filters and prints a table', async () => {
    const ws = freshWorkspace();
    const id = `cli-park-${ws}`;
    await outcome(['run', '--model', 'destructive', '--workspace', ws, '--id', id, '--detach']);
    // Visibility is updated asynchronously: wait for the row, not for time.
    const row = await waitFor('the parked run in `list --awaiting`', async () => (await outcome(['list', '--awaiting'])).stdout.split('\n').find((l) => l.startsWith(id)));
    expect(row).toMatch(/RUNNING\s+awaiting_approval\s+2\s+0\.\d{6}\s+delete_file c2/);
    expect((await outcome(['list', '--awaiting'])).stdout.split('\n')[0]).toMatch(/^WORKFLOW ID\s+TEMPORAL\s+AGENT STATUS\s+TURNS\s+COST USD\s+AWAITING\s+STARTED$/);
    // The same through the temporal CLI, as ops tooling would ask.
    const listed = JSON.parse(`[${(await exec(findTemporalCli(), ['workflow', 'list', '--address', h.address, '--query', 'AgentStatus="awaiting_approval" AND AgentAwaitingTool="delete_file"', '--output', 'jsonl'])).stdout.trim().split('\n').filter(Boolean).join(',')}]`) as { execution: { workflowId: string } }[];
    expect(listed.map((w) => w.execution.workflowId)).toContain(id);
    expect((await outcome(['reject', id, 'c2', '--reason', 'keep it'])).code).toBe(0);
    await waitFor('the run under --status completed', async () => (await outcome(['list', '--status', 'completed'])).stdout.includes(id));
    expect((await outcome(['list', '--awaiting'])).stdout).not.toContain(id);
    expect((await outcome(['list', '--status', 'parked'])).code).toBe(2);
  });

  it('list: takes every documented status, is newest first, and shows a terminated run as terminated (issue 34, 5e)', async () => {
    for (const status of ['waiting_for_model', 'waiting_for_tool', 'terminated']) {
      const r = await outcome(['list', '--status', status]);
      expect(r.code, `${status}: ${r.stderr}`).toBe(0);
    }
    // Started in this order: a run that completes, one left parked (live), one that completes.
    const tag = freshWorkspace();
    const [older, parked, newer] = ['a', 'b', 'c'].map((x) => `cli-order-${x}-${tag}`);
    expect((await outcome(['run', '--model', 'plan', '--id', older])).code).toBe(0);
    expect((await outcome(['run', '--model', 'destructive', '--workspace', tag, '--id', parked, '--detach'])).code).toBe(0);
    await waitFor('the run to park', async () => (await outcome(['list', '--awaiting'])).stdout.includes(parked));
    expect((await outcome(['run', '--model', 'plan', '--id', newer])).code).toBe(0);
    const order = await waitFor('the three runs listed', async () => {
      const rows = (await outcome(['list'])).stdout.split('\n');
      const ids = rows.map((l) => l.split(/\s+/)[0]).filter((id) => [older, parked, newer].includes(id));
      return ids.length === 3 && rows.some((l) => l.startsWith(newer) && l.includes('completed')) ? ids : null;
    });
    // Visibility lists a live execution before closed ones; newest first puts the last one started first.
    expect(order).toEqual([newer, parked, older]);

    await h.client.workflow.getHandle(parked).terminate('ops: stuck');
    const row = await waitFor('the terminated run listed as such', async () => (await outcome(['list'])).stdout.split('\n').find((l) => l.startsWith(parked) && l.includes('TERMINATED')));
    // Its own attribute still says awaiting_approval (a terminated run records nothing): the server's word is shown.
    expect(row).toMatch(/TERMINATED\s+terminated\s/);
    expect((await outcome(['list', '--status', 'terminated'])).stdout).toContain(parked);
    expect((await outcome(['list', '--status', 'awaiting_approval'])).stdout).not.toContain(parked);
    expect((await outcome(['list', '--awaiting'])).stdout).not.toContain(parked);
  });

  it('resume continues a run stopped at its cap with a higher cap, and refuses a completed one (exit 1 with the reason)', async () => {
    const id = `cli-resume-${freshWorkspace()}`;
    expect((await outcome(['run', '--model', 'runaway', '--max-turns', '2', '--id', id])).code).toBe(EXIT_CODES.max_turns_exceeded);
    const resumed = await outcome(['resume', id, '--max-turns', '4']);
    expect(resumed.code).toBe(EXIT_CODES.max_turns_exceeded);
    expect(resumed.stdout).toMatch(/^turns=4 /m);
    const done = `cli-resume-done-${freshWorkspace()}`;
    await outcome(['run', '--model', 'plan', '--id', done]);
    const refused = await outcome(['resume', done]);
    expect(refused.code).toBe(EXIT_CODES.failed);
    expect(refused.stderr).toMatch(/cannot resume: run .* is completed/);
  });

  it('approve through the CLI with a wrong call id is refused; the trace command prints the run', { timeout: 180_000 }, async () => {
    const ws = freshWorkspace();
    const id = `cli-approve-${ws}`;
    await exec(bin, ['run', '--model', 'destructive', '--workspace', ws, '--id', id, '--detach'], { env: env() });
    await waitFor('the run to park on c2', async () => {
      const s = JSON.parse((await exec(bin, ['status', id], { env: env() })).stdout) as RunStatusView;
      return s.interruption?.type === 'approval';
    });
    const wrong = await exec(bin, ['approve', id, 'c9'], { env: env() }).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(wrong?.code).toBe(1);
    expect(wrong?.stderr).toContain('refused');
    const right = await exec(bin, ['approve', id, 'c2', '--by', 'alice'], { env: env() });
    expect(right.stdout).toContain('approved c2');
    const result = await exec(bin, ['result', id], { env: env() });
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed' });
    const trace = (await exec(bin, ['trace', id], { env: env() })).stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; runId: string });
    expect(trace.every((l) => l.runId === id)).toBe(true);
    expect(trace.map((l) => l.type)).toContain('approval_decided');

    // The id used again: `trace` shows the new run, `--run-id` the earlier one.
    const firstChain = (trace.find((l) => l.type === 'run_started') as { chainId?: string } | undefined)?.chainId;
    expect(firstChain).toBeTruthy();
    await exec(bin, ['run', '--model', 'plan', '--id', id], { env: env(), timeout: 60_000 });
    const lines = async (...extra: string[]) =>
      (await exec(bin, ['trace', id, ...extra], { env: env() })).stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; chainId?: string });
    const latest = await lines();
    expect(latest.find((l) => l.type === 'run_started')?.chainId).not.toBe(firstChain);
    expect(latest.map((l) => l.type)).not.toContain('approval_decided');
    expect((await lines('--run-id', firstChain!)).map((l) => l.type)).toContain('approval_decided');
  });
});
