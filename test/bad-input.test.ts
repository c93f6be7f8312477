// The bad-input matrix: malformed model output, oversized results, paths that
// try to leave the workspace, and signals that make no sense. Each row ends in
// a clear error or trace line the model or the operator can read; no run hangs.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureWorkspace } from '../activities/tools/workspace.js';
import { approveSignal, cancelSignal, decideUpdate, rejectSignal, statusQuery, transcriptQuery } from '../common/run-messages.js';
import type { ChatMessage } from '../common/contract.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';

const h = useHarness();
const matrix: string[] = [];
afterAll(() => console.log(`bad-input matrix:\n${matrix.join('\n')}`));

const toolResults = (t: ChatMessage[]) => t.flatMap((m) => (m.role === 'tool' ? [m] : []));

describe('model output', () => {
  it.each([
    ['bad_json_args', 'malformed JSON arguments', /Error: the arguments of read_file are not valid JSON/, 0],
    ['unknown_tool', 'an unknown tool name', /Error: unknown tool "rm_rf"\. Available tools: list_files, read_file/, 0],
    // Checked in the workflow before any activity: no tool run is spent on it.
    ['bad_schema', 'arguments failing the schema', /Error: invalid arguments for read_file: .*\/path: must be of type string, got (integer|number).*arguments: has unexpected property "mode"/, 0],
    ['huge_args', 'huge arguments (210 kB)', /Error: the arguments of read_file are 2\d{5} characters long; the limit is 16384/, 0],
  ])('%s: %s -> an error result the model reads, and the run goes on', async (model, label, expected, toolRuns) => {
    const handle = await h.start({ task: 'Read errors.log.', model });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns });
    const [result] = toolResults(await handle.query(transcriptQuery));
    expect(result.content).toMatch(expected);
    expect(r.output).toContain(result.content.slice(0, 40));
    matrix.push(`model output | ${label} | completed, tool result: ${result.content.slice(0, 90)}`);
  });

  it('three calls in one turn: three results, each with its call id, in order', async () => {
    const handle = await h.start({ task: 'Read everything.', model: 'three_calls' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', turns: 2, toolRuns: 3 });
    expect(toolResults(await handle.query(transcriptQuery)).map((m) => m.tool_call_id)).toEqual(['c1', 'c2', 'c3']);
    matrix.push('model output | three calls in one turn | completed, 3 results c1 c2 c3');
  });

  it('an empty reply ends the run as completed with an empty answer, and says so', async () => {
    const handle = await h.start({ task: 'Say nothing.', model: 'empty_reply' });
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: '', turns: 1 });
    expect(h.events(handle.workflowId).at(-1)).toMatchObject({ type: 'run_stopped', reason: expect.stringContaining('empty reply') });
    matrix.push('model output | empty reply | completed, output "", run_stopped reason names the empty reply');
  });
});

describe('tool results and paths', () => {
  it('a result over the configured cap is cut with a note the model can read', async () => {
    const ws = freshWorkspace();
    const big = 'line of log text\n'.repeat(3000);
    writeFileSync(join(ensureWorkspace(h.workspaceRoot, ws), 'big.log'), big);
    const handle = await h.start({ task: 'Read path=big.log', model: 'read', workspace: ws, maxToolResultChars: 1000 });
    const r = await handle.result();
    const [result] = toolResults(await handle.query(transcriptQuery));
    expect(result.content).toContain(`[truncated by the harness: the result was ${big.length} characters; only the first 1000 are shown]`);
    expect(result.content.length).toBeLessThan(1200);
    expect(r.status).toBe('completed');
    matrix.push(`tool result | ${big.length} chars, cap 1000 | truncated, note in the result`);
  });

  const ws = freshWorkspace();
  it.each([
    ['..', 'path=../outside.txt', /climbs out with "\.\."/],
    ['absolute', 'path=/etc/passwd', /is absolute/],
    ['symlink out', 'path=leak.txt', /leads outside the workspace through a symbolic link/],
    ['right-to-left override', 'path=\u202eerrors.log', /control or look-alike characters/],
    ['fullwidth dots and slash', 'path=\uff0e\uff0e\uff0fouter.txt', /control or look-alike characters/],
  ])('path %s -> refused with an error the model can act on', async (label, task, expected) => {
    const root = ensureWorkspace(h.workspaceRoot, ws);
    writeFileSync(join(h.workspaceRoot, 'outside.txt'), 'not yours');
    try {
      symlinkSync(join(h.workspaceRoot, 'outside.txt'), join(root, 'leak.txt'));
    } catch {
      // made by an earlier row
    }
    const handle = await h.start({ task, model: 'read', workspace: ws });
    const r = await handle.result();
    const [result] = toolResults(await handle.query(transcriptQuery));
    expect(result.content).toMatch(expected);
    expect(result.content).not.toContain('not yours');
    expect(r.status).toBe('completed');
    matrix.push(`path | ${label} | completed, tool result: ${result.content.slice(0, 80)}`);
  });

  it('path to a secret -> the run stops: a permanent error, not a retry loop', async () => {
    const wsx = freshWorkspace();
    mkdirSync(join(h.workspaceRoot, wsx), { recursive: true });
    writeFileSync(join(ensureWorkspace(h.workspaceRoot, wsx), '.env'), 'API_KEY=sk-live-123');
    const handle = await h.start({ task: 'Read path=.env', model: 'read', workspace: wsx });
    const r = await handle.result();
    expect(r.status).toBe('failed');
    expect(r.error).toContain('access denied');
    expect(JSON.stringify(await handle.query(transcriptQuery))).not.toContain('sk-live-123');
    matrix.push('path | .env (secret) | failed: permanent tool error, access denied');
  });
});

describe('signals', () => {
  it('already-decided and future call ids are ignored; the future call still asks for its own approval', async () => {
    const handle = await h.start({ task: 'Free space.', model: 'destructive_twice', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c1');
    await handle.signal(approveSignal, { callId: 'c2', by: 'early-bird' }); // future
    await handle.signal(approveSignal, { callId: 'c1', by: 'alice' });
    await waitForApproval(handle, 'c2');
    await handle.signal(approveSignal, { callId: 'c1', by: 'alice' }); // already decided
    await waitFor('two ignored signals', () => h.trace(handle.workflowId).filter((l) => l.type === 'signal_ignored').length === 2);
    // Still parked on c2: the early approval did not count.
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'interrupted', interruption: { callId: 'c2' } });
    await handle.signal(rejectSignal, { callId: 'c2', reason: 'one is enough' });
    expect((await handle.result()).status).toBe('completed');
    matrix.push('signal | approve a future call id | ignored, traced; the call still waits for its own decision');
    matrix.push('signal | approve an already-decided call id | ignored, traced');
  });

  it('malformed payloads are ignored and traced; the run keeps waiting', async () => {
    const handle = await h.start({ task: 'Tidy.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    const raw = handle as unknown as { signal(name: string, arg: unknown): Promise<void> };
    await raw.signal('approve', {});
    await raw.signal('approve', 'c2');
    await raw.signal('reject', { callId: 5 });
    await raw.signal('approve', null);
    await expect(handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'maybe' as 'approve' }] })).rejects.toThrow();
    await waitFor('four ignored signals', () => h.trace(handle.workflowId).filter((l) => l.type === 'signal_ignored').length === 4);
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'interrupted', interruption: { callId: 'c2' } });
    await raw.signal('cancel', 42);
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'interrupted', interruption: { type: 'cancelled', reason: 'cancelled' } });
    matrix.push('signal | approve {} / "c2" / null, reject {callId:5} | ignored, traced "callId must be a string"');
    matrix.push('signal | decide with decision "maybe" | refused by the validator');
    matrix.push('signal | cancel with payload 42 | cancelled with reason "cancelled"');
  });

  it('approve after the run ended is refused by the server with a clear error', async () => {
    const handle = await h.start({ task: 'Tidy.', model: 'destructive', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c2');
    await handle.signal(cancelSignal, { reason: 'stop' });
    await handle.result();
    await expect(handle.signal(approveSignal, { callId: 'c2' })).rejects.toThrow(/already completed/);
    matrix.push('signal | approve after cancel | refused: workflow execution already completed');
  });

  it('approval is not bypassed by the naive cache: the second identical delete asks again', async () => {
    const handle = await h.start({ task: 'Free space.', model: 'destructive_twice', dedupe: 'all', workspace: freshWorkspace() });
    await waitForApproval(handle, 'c1');
    await handle.signal(approveSignal, { callId: 'c1' });
    const parked = await waitForApproval(handle, 'c2');
    expect(parked.interruption).toMatchObject({ type: 'approval', toolName: 'delete_file' });
    await handle.signal(rejectSignal, { callId: 'c2' });
    expect((await handle.result()).toolRuns).toBe(1);
    matrix.push('approval | identical write under dedupe "all" | asks again; cache never stands in for a decision');
  });
});
