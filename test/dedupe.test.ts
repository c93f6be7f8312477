// Repeated calls and the cache: read-only results may be reused; writes must
// run (guarded by their idempotency key), unless the naive cache swallows them.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approveSignal, rejectSignal } from '../common/run-messages.js';
import type { RunResult } from '../common/contract.js';
import { freshWorkspace, useHarness, waitForApproval } from './helpers/harness.js';

const h = useHarness();
const task = 'Which file mentions a timeout?';

describe('duplicate scenario', () => {
  it('the read-only cache saves the repeated tool run, not the turn', async () => {
    const off = await h.run({ task, model: 'duplicate', dedupe: 'off' });
    const handle = await h.start({ task, model: 'duplicate', dedupe: 'readOnly' });
    const cached = await handle.result();
    expect(off).toMatchObject({ status: 'completed', turns: 4, toolRuns: 3 });
    expect(cached).toMatchObject({ status: 'completed', turns: 4, toolRuns: 2 });
    // Same turns, same tokens, same money: the cache does not buy back the turn.
    expect(cached.costUsd).toBeCloseTo(off.costUsd, 12);
    const results = h.trace(handle.workflowId).filter((l) => l.type === 'tool_result');
    expect(results.map((l) => [l.toolName, l.cached ?? false])).toEqual([
      ['list_files', false],
      ['read_file', false],
      ['read_file', true],
    ]);
  });
});

describe('destructive_twice scenario', () => {
  async function runApprovingEach(dedupe: 'all' | 'readOnly', workspace: string): Promise<RunResult> {
    const handle = await h.start({ task: 'Free some space.', model: 'destructive_twice', dedupe, workspace });
    for (const callId of ['c1', 'c2']) {
      await waitForApproval(handle, callId);
      await handle.signal(approveSignal, { callId, by: 'test' });
    }
    return await handle.result();
  }

  it('naive cache on writes: the second intended delete never runs', async () => {
    const ws = freshWorkspace();
    const r = await runApprovingEach('all', ws);
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 1 });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
  });

  it('read-only gate: both deletes run; approval is asked for each', async () => {
    const ws = freshWorkspace();
    const r = await runApprovingEach('readOnly', ws);
    expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 2 });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
  });
});

describe('list_delete_list scenario', () => {
  // A read after a write runs again: the cache may not answer it with what it
  // held before the write. Found by reading a run: the second listing named
  // the file the approved delete had just removed.
  it('a listing after an approved delete runs again and no longer names the file', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task: 'Free some space, then check.', model: 'list_delete_list', dedupe: 'readOnly', workspace: ws });
    await waitForApproval(handle, 'c2');
    await handle.signal(approveSignal, { callId: 'c2', by: 'test' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 4, toolRuns: 3, output: 'access.log is gone from the listing.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
    const results = h.trace(handle.workflowId).filter((l) => l.type === 'tool_result');
    expect(results.map((l) => [l.callId, l.cached ?? false])).toEqual([
      ['c1', false],
      ['c2', false],
      ['c3', false],
    ]);
  });

  it('a rejected delete changes nothing: the repeated listing is still served from the cache', async () => {
    const ws = freshWorkspace();
    const handle = await h.start({ task: 'Free some space, then check.', model: 'list_delete_list', dedupe: 'readOnly', workspace: ws });
    await waitForApproval(handle, 'c2');
    await handle.signal(rejectSignal, { callId: 'c2', by: 'test', reason: 'keep it' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 4, toolRuns: 1, output: 'access.log is still listed.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
    const results = h.trace(handle.workflowId).filter((l) => l.type === 'tool_result');
    expect(results.filter((l) => l.callId === 'c3').map((l) => l.cached)).toEqual([true]);
  });
});
