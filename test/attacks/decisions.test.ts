// The attacker's tests of decisions (issue 33, "a decision names one
// occurrence of one call"). Each reproduces a way a decision was moved that
// its signer (or sender) never meant, as an attacker would: a payload copied
// out of history and sent again with the `temporal` CLI, a signature
// re-encoded, a workflow id used again after its run completed, a model that
// reuses a call id, a signature for one tool sent to another. Each checks the
// harm did not happen (the file is still there, the message queued once), and
// that the refusal names why. A team's worker started with AGENT_APPROVERS in
// its environment enforces the policy too.
import { SEED_FILES } from '../../activities/tools/workspace.js';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { argsHash } from '../../common/args-hash.js';
import { approveSignal, cancelSignal, decideUpdate, statusQuery, steerSignal, steerUpdate } from '../../common/run-messages.js';
import type { RunStatusView } from '../../common/contract.js';
import { checkSignature, fromBase64, fromCanonicalBase64, newKeyPair, signDecision, toBase64, type ApproverPolicy, type SignedFields } from '../../common/signed-decision.js';
import { AgentClient } from '../../client/agent-client.js';
import { main } from '../../client/cli.js';
import { privateKeyOf, signOther } from '../../client/signing.js';
import { AgentPlugin } from '../../worker/agent-plugin.js';
import { pluginEnvironment } from '../../worker/plugin-env.js';
import { OPTION_NAMES } from '../../worker/setting-names.js';
import { ApprovalRules, type AwaitingApproval } from '../../workflows/approval-rules.js';
import type { agentRun } from '../../workflows/index.js';
import { decodePayloads } from '../helpers/decoded-history.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from '../helpers/harness.js';
import { temporalCli } from '../helpers/temporal-cli.js';
import { propertyParams } from '../helpers/property.js';
import { loadWorkerTools, type WorkerTools } from '../../worker/toolset.js';
import { writeStallingFsConfig } from '../mcp/stalling-config.js';

const h = useHarness();
const task = 'Which file mentions a timeout?';
const alice = newKeyPair();
const aliceKey = privateKeyOf(alice.privateKey);
const policy: ApproverPolicy = {
  approvers: { alice: alice.publicKey },
  tools: { delete_file: ['alice'] },
  decisions: { steer: ['alice'], raiseBudget: ['alice'], reconcile: ['alice'] },
};

type Run = WorkflowHandle<typeof agentRun>;
const accessLog = (ws: string) => join(h.workspaceRoot, ws, 'access.log');
/** A person put the file back after the first deletion: what a replayed approval would delete again. */
const restore = (ws: string) => writeFileSync(accessLog(ws), 'GET /restored 200\n');

/**
 * The first payload of an update or signal of this name in the run's history,
 * decoded as the server keeps it: what anyone who can read the history (the
 * Web UI, `temporal workflow show`) can copy.
 */
async function copiedFromHistory(handle: WorkflowHandle, name: string, kind: 'update' | 'signal', runId?: string): Promise<Record<string, unknown>> {
  const history = await h.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
  for (const e of history.events ?? []) {
    const payloads =
      kind === 'update'
        ? e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name
          ? e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest.input.args?.payloads
          : undefined
        : e.workflowExecutionSignaledEventAttributes?.signalName === name
          ? e.workflowExecutionSignaledEventAttributes.input?.payloads
          : undefined;
    if (payloads) return (await decodePayloads(payloads))[0] as Record<string, unknown>;
  }
  throw new Error(`no ${kind} ${name} in the history of ${handle.workflowId}`);
}

/** `temporal workflow update execute --name NAME --input PAYLOAD`: what it printed, and whether it was refused. */
async function updateByCli(workflowId: string, name: string, payload: unknown): Promise<{ refused: boolean; said: string }> {
  const r = await temporalCli(h.address, 'workflow', 'update', 'execute', '--workflow-id', workflowId, '--name', name, '--input', JSON.stringify(payload));
  return { refused: r.code !== 0, said: `${r.stderr}${r.stdout}` };
}

async function refusedUpdate(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the update should have been refused').toBeInstanceOf(WorkflowUpdateFailedError);
  return (err as WorkflowUpdateFailedError).cause?.message ?? '';
}

const parkedOn = async (handle: WorkflowHandle, nth: number): Promise<RunStatusView> =>
  waitFor(`parked on c2 for the ${nth}. time`, async () => {
    const s = await handle.query(statusQuery);
    const parks = h.trace(handle.workflowId).filter((l) => l.type === 'approval_required' && l.callId === 'c2').length;
    return s.interruption?.type === 'approval' && s.interruption.callId === 'c2' && parks === nth ? s : null;
  });

describe('signed decisions cannot be replayed onto another run, call, or tool', () => {
  const queue = `attack-signed-${randomUUID().slice(0, 8)}`;
  let worker: { shutdown(): Promise<void> };
  let agent: AgentClient;

  beforeAll(async () => {
    worker = await h.startWorker({ taskQueue: queue, runDefaults: { approvers: policy } });
    agent = new AgentClient({ client: h.client, taskQueue: queue });
  });
  afterAll(async () => {
    await worker?.shutdown();
  });

  it('a workflow id used again after its run completed: alice\'s approval copied out of the first run\'s history approves nothing in the second', async () => {
    const ws = freshWorkspace();
    const id = `attack-reuse-${ws}`;
    const start = () => h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: id, args: [{ task, model: 'destructive', workspace: ws }] });
    const first = await start();
    await waitForApproval(first, 'c2');
    await agent.getHandle(id).approve('c2', { by: 'alice', key: aliceKey });
    expect((await first.result()).status).toBe('completed');
    expect(existsSync(accessLog(ws))).toBe(false);
    const copied = await copiedFromHistory(first, 'decide', 'update', first.firstExecutionRunId);
    expect(copied).toMatchObject({ by: 'alice', callId: 'c2', decision: 'approve', signature: expect.any(String) });

    // The same workflow id, the same call id, the same arguments: only the run chain differs.
    restore(ws);
    const second = await start();
    const parked = await waitForApproval(second, 'c2');
    expect(parked.interruption).toMatchObject({ argsHash: copied.argsHash, callKey: expect.stringMatching(new RegExp(`^${id}@${second.firstExecutionRunId}/call`)) });
    const replay = await updateByCli(id, 'decide', copied);
    expect(replay.refused).toBe(true);
    expect(replay.said).toContain('signature is for another run of this workflow id');
    // The payload as the contract's six fields had it (no callKey, no toolName): its signature does not cover this run.
    const { callKey: _k, toolName: _t, ...sixFields } = copied;
    const bare = await updateByCli(id, 'decide', sixFields);
    expect(bare.refused).toBe(true);
    expect(bare.said).toContain('signature does not verify');
    // As a signal, with the same payload: ignored on record.
    await h.client.workflow.getHandle(id).signal(approveSignal, copied as never);
    const ignored = await waitFor('the replayed signal ignored', () => h.trace(id, second.firstExecutionRunId).find((l) => l.type === 'signal_ignored') ?? null);
    expect(String(ignored.reason)).toMatch(/^signature is for another run of this workflow id/);

    expect(existsSync(accessLog(ws))).toBe(true);
    expect((await second.query(statusQuery)).interruption).toMatchObject({ type: 'approval', callId: 'c2' });
    await second.signal(cancelSignal, { reason: 'attack test done' });
    expect((await second.result()).status).toBe('interrupted');
    expect(existsSync(accessLog(ws))).toBe(true);
  });

  it('a model that reuses call id c2 for a second deletion: replaying the first signature is refused', async () => {
    const ws = freshWorkspace();
    const handle = (await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: `attack-c2-${ws}`, args: [{ task, model: 'reused_call_id', workspace: ws }] })) as Run;
    const firstPark = await parkedOn(handle, 1);
    await agent.getHandle(handle.workflowId).approve('c2', { by: 'alice', key: aliceKey });
    const secondPark = await parkedOn(handle, 2);
    expect(existsSync(accessLog(ws))).toBe(false);
    restore(ws);
    // Same id, same tool, same arguments: only the occurrence differs.
    const [a, b] = [firstPark.interruption, secondPark.interruption];
    if (a?.type !== 'approval' || b?.type !== 'approval') throw new Error('not parked on an approval');
    expect([b.callId, b.toolName, b.argsHash]).toEqual([a.callId, a.toolName, a.argsHash]);
    expect(b.callKey).not.toBe(a.callKey);

    const copied = await copiedFromHistory(handle, 'decide', 'update');
    const replay = await updateByCli(handle.workflowId, 'decide', copied);
    expect(replay.refused).toBe(true);
    expect(replay.said).toContain('is for another call');
    const { callKey: _k, toolName: _t, ...sixFields } = copied;
    expect((await updateByCli(handle.workflowId, 'decide', sixFields)).said).toContain('signature does not verify');
    await handle.signal(approveSignal, copied as never);
    const ignored = await waitFor('the replayed signal ignored', () => h.trace(handle.workflowId).find((l) => l.type === 'signal_ignored') ?? null);
    expect(String(ignored.reason)).toContain('is for another call');

    expect(existsSync(accessLog(ws))).toBe(true);
    expect((await handle.query(statusQuery)).interruption).toMatchObject({ type: 'approval', callId: 'c2', callKey: b.callKey });
    // Alice's own approval of the second occurrence still works: she signs what the status shows now.
    await agent.getHandle(handle.workflowId).reject('c2', { by: 'alice', reason: 'once was enough', key: aliceKey });
    expect((await handle.result()).status).toBe('completed');
    expect(existsSync(accessLog(ws))).toBe(true);
  });

  it('a signed steer re-encoded (URL-safe, stripped padding, whitespace) is refused, not queued again', async () => {
    const ws = freshWorkspace();
    const id = `attack-steer-${ws}`;
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: id, args: [{ task, model: 'destructive', workspace: ws }] });
    await waitForApproval(handle, 'c2');
    // Signed as AgentClient signs; one whose text holds a "+" or "/", so its URL-safe form is another text (most are).
    const runKey = (await handle.query(statusQuery)).runKey ?? '';
    let signed = signOther({ message: 'look in logs/ first', by: 'alice' }, { workflowId: id, decision: 'steer', by: 'alice', callKey: runKey, key: aliceKey });
    for (let ttl = 120_000; !/[+/]/.test(signed.signature ?? ''); ttl += 1000) {
      signed = signOther({ message: 'look in logs/ first', by: 'alice' }, { workflowId: id, decision: 'steer', by: 'alice', callKey: runKey, key: aliceKey, expiresInMs: ttl });
    }
    expect((await handle.executeUpdate(steerUpdate, { args: [signed] })).queuedSteers).toHaveLength(1);
    const copied = await copiedFromHistory(handle, 'steer', 'update');
    const sig = String(copied.signature);
    expect(sig).toMatch(/==$/);
    const reencoded = {
      urlSafe: sig.replace(/\+/g, '-').replace(/\//g, '_'),
      unpadded: sig.replace(/=+$/, ''),
      newline: `${sig}\n`,
      spaced: ` ${sig} `,
    };
    // Each decodes to the very signature bytes with the lenient decoder (what let them in before).
    for (const text of Object.values(reencoded)) expect(toBase64(fromBase64(text) ?? new Uint8Array())).toBe(sig);
    for (const [how, text] of Object.entries(reencoded)) {
      const said = await refusedUpdate(handle.executeUpdate(steerUpdate, { args: [{ ...copied, signature: text } as never] }));
      expect(said, how).toMatch(/^signature must be standard base64/);
      await handle.signal(steerSignal, { ...copied, signature: text } as never);
    }
    // The canonical text again: used.
    expect(await refusedUpdate(handle.executeUpdate(steerUpdate, { args: [copied as never] }))).toMatch(/^signature already used: this signed steer by "alice"/);
    const ignored = await waitFor('the four re-encoded signals ignored', () => {
      const lines = h.trace(id).filter((l) => l.type === 'signal_ignored' && l.signal === 'steer');
      return lines.length === 4 ? lines : null;
    });
    expect(ignored.every((l) => String(l.reason).startsWith('signature must be standard base64'))).toBe(true);
    expect((await handle.query(statusQuery)).queuedSteers).toHaveLength(1);
    expect(h.trace(id).filter((l) => l.type === 'steer_queued')).toHaveLength(1);
    await handle.signal(cancelSignal, { reason: 'attack test done' });
    await handle.result();
  });

  it('a signed steer for one run chain is refused on the next run of the same workflow id', async () => {
    const ws = freshWorkspace();
    const id = `attack-steer-reuse-${ws}`;
    const start = () => h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: id, args: [{ task, model: 'destructive', workspace: ws }] });
    const first = await start();
    await waitForApproval(first, 'c2');
    await agent.getHandle(id).steer('delete everything you find', { by: 'alice', key: aliceKey });
    const copied = await copiedFromHistory(first, 'steer', 'update');
    await first.signal(cancelSignal, { reason: 'first run done' });
    await first.result();
    const second = await start();
    await waitForApproval(second, 'c2');
    const replay = await updateByCli(id, 'steer', copied);
    expect(replay.refused).toBe(true);
    expect(replay.said).toContain('signature is for another run of this workflow id');
    expect((await second.query(statusQuery)).queuedSteers).toHaveLength(0);
    await second.signal(cancelSignal, { reason: 'attack test done' });
    await second.result();
  });

  it('a signature for tool A sent to tool B with the same call id, occurrence and arguments is refused (the workflow\'s check)', () => {
    const args = { path: 'access.log' };
    const call = (toolName: string): AwaitingApproval => ({ key: 'w@chain/call2', callId: 'c2', toolName, args, argsHash: argsHash(args), hashRequired: false });
    const fields: SignedFields = { argsHash: argsHash(args), by: 'alice', callId: 'c2', callKey: 'w@chain/call2', decision: 'approve', expiresAt: new Date(Date.now() + 60_000).toISOString(), toolName: 'archive_file', workflowId: 'w' };
    const twoTools: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { archive_file: ['alice'], delete_file: ['alice'] } };
    // Alice approved archiving access.log; the payload names only what it signed, as a copied one would.
    const { toolName: _t, ...withoutTool } = fields;
    const payload = { ...withoutTool, signature: signDecision(fields, aliceKey) };
    const rules = (toolName: string) => {
      const r = new ApprovalRules({}, (c, input, verdict) => {
        const v = checkSignature(twoTools, ['alice'], `tool ${c.toolName}`, { argsHash: c.argsHash, callId: c.callId, callKey: c.key, decision: verdict, toolName: c.toolName, workflowId: 'w' }, input, Date.now());
        return v.ok ? null : v.problem;
      });
      r.awaiting = call(toolName);
      return r;
    };
    expect(rules('archive_file').problem(payload, 'approve')).toBeNull();
    expect(rules('delete_file').problem(payload, 'approve')).toMatch(/^signature does not verify/);
    // Naming the tool it was signed for: refused as such.
    expect(rules('delete_file').problem({ ...payload, toolName: 'archive_file' }, 'approve')).toBe('signature is for another tool: signed for "archive_file", this call is "delete_file"');
    // Unsigned (no policy), a decision that names its tool moves no other tool's call.
    const open = new ApprovalRules({});
    open.awaiting = call('delete_file');
    expect(open.problem({ callId: 'c2', by: 'ops', toolName: 'archive_file' }, 'approve')).toBe('decision is for another tool: it names "archive_file", call "c2" is "delete_file"');
    // Only canonical base64 is a signature.
    expect(fromCanonicalBase64(payload.signature)).not.toBeNull();
    expect(fromCanonicalBase64(payload.signature.replace(/=+$/, ''))).toBeNull();
  });
});

describe('hostile decision payloads (property): nothing but the one signed decision moves the parked call', () => {
  const args = { path: 'access.log' };
  const chain = 'w@0193a6f2-7c1e-7d4b-9a51-2f0e8c3d4b6a';
  const awaiting: AwaitingApproval = { key: `${chain}/call2`, callId: 'c2', toolName: 'delete_file', args, argsHash: argsHash(args), hashRequired: false };
  const rules = () => {
    const r = new ApprovalRules({}, (c, input, verdict) => {
      const v = checkSignature(policy, ['alice'], `tool ${c.toolName}`, { argsHash: c.argsHash, callId: c.callId, callKey: c.key, decision: verdict, toolName: c.toolName, workflowId: 'w' }, input, Date.now());
      return v.ok ? null : v.problem;
    });
    r.awaiting = { ...awaiting };
    return r;
  };
  const base: SignedFields = { argsHash: awaiting.argsHash, by: 'alice', callId: 'c2', callKey: awaiting.key, decision: 'approve', expiresAt: new Date(Date.now() + 3_600_000).toISOString(), toolName: 'delete_file', workflowId: 'w' };
  const signedFor = (f: SignedFields) => ({ ...f, signature: signDecision(f, aliceKey) });
  const good = signedFor(base);

  it('the genuine decision is taken; a payload signed for anything else, or carried in another encoding, is refused with a reason, and junk never throws', () => {
    expect(rules().problem(good, 'approve')).toBeNull();
    // What an attacker can vary: what was signed (another occurrence, chain, tool, run, arguments, decision, signer), how the signature is written, and any field's value.
    const signedElsewhere = fc.oneof(
      fc.constantFrom(`${chain}/call1`, `${chain}/call3`, 'w@another-chain/call2', '', `${chain}/m3/c2`).map((callKey) => ({ callKey })),
      fc.constantFrom('archive_file', 'read_file', '', 'delete_file ').map((toolName) => ({ toolName })),
      fc.constantFrom('w2', 'W', '').map((workflowId) => ({ workflowId })),
      fc.constantFrom(argsHash({ path: 'notes.txt' }), argsHash({})).map((h) => ({ argsHash: h })),
      fc.constant({ decision: 'reject' as const }),
    );
    fc.assert(
      fc.property(signedElsewhere, fc.boolean(), (over, named) => {
        const f = { ...base, ...over };
        const sent = signedFor(f);
        // Copied whole (the fields it was signed for in it), or stripped to look like this call's.
        const payload = named ? sent : { ...good, signature: sent.signature };
        expect(rules().problem(payload, 'approve')).toEqual(expect.any(String));
      }),
      propertyParams(200),
    );
    const reencoded = fc.constantFrom(
      (t: string) => t.replace(/=+$/, ''),
      (t: string) => t.replace(/\+/g, '-').replace(/\//g, '_'),
      (t: string) => ` ${t}`,
      (t: string) => `${t}\n`,
      (t: string) => `${t}=`,
      (t: string) => t.toLowerCase(),
    );
    fc.assert(
      fc.property(reencoded, (how) => {
        const text = how(good.signature);
        fc.pre(text !== good.signature);
        expect(rules().problem({ ...good, signature: text }, 'approve')).toEqual(expect.any(String));
      }),
      propertyParams(100),
    );
    const fields = ['callId', 'by', 'argsHash', 'callKey', 'toolName', 'workflowId', 'expiresAt', 'signature', 'decision'] as const;
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.anything(), fc.constantFrom('approve', 'reject', 'maybe', 7, null), (field, value, verdict) => {
        const payload: Record<string, unknown> = { ...good, [field]: value };
        const problem = rules().problem(payload, verdict);
        // Junk in any field: a reason, never a throw. Taken only as signed: the
        // verdict approve, every field genuine or not naming anything (a field
        // the payload leaves out, or that is not text, is taken as this call's).
        if (problem !== null) {
          expect(typeof problem).toBe('string');
          return;
        }
        const namesNothing = (['workflowId', 'argsHash', 'callKey', 'toolName', 'decision'].includes(field) && (value === undefined || value === null)) || (['workflowId', 'decision'].includes(field) && typeof value !== 'string');
        expect(verdict).toBe('approve');
        expect(namesNothing || JSON.stringify(value) === JSON.stringify(good[field])).toBe(true);
      }),
      propertyParams(300),
    );
  });
});

describe('without a policy, a decision moves only the call awaiting it', () => {
  it('an unsigned approval naming the first occurrence\'s callKey, replayed onto a reused call id, is refused', async () => {
    const ws = freshWorkspace();
    const handle = (await h.start({ task, model: 'reused_call_id', workspace: ws }, `attack-unsigned-${ws}`)) as Run;
    const first = await parkedOn(handle, 1);
    if (first.interruption?.type !== 'approval') throw new Error('not parked');
    // As a careful script would, with our CLI: the decision names the occurrence it means.
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await main(['approve', handle.workflowId, 'c2', '--by', 'ops-script', '--call-key', first.interruption.callKey ?? ''], h.client)).toBe(0);
    } finally {
      log.mockRestore();
    }
    await parkedOn(handle, 2);
    restore(ws);
    const copied = await copiedFromHistory(handle, 'decide', 'update');
    expect(copied.callKey).toBe(first.interruption.callKey);
    const replay = await updateByCli(handle.workflowId, 'decide', copied);
    expect(replay.refused).toBe(true);
    expect(replay.said).toContain('decision is for another call');
    await handle.signal(approveSignal, copied as never);
    await waitFor('the replayed signal ignored', () => h.trace(handle.workflowId).find((l) => l.type === 'signal_ignored') ?? null);
    expect(existsSync(accessLog(ws))).toBe(true);
    // A decision that names no occurrence, sent while the second awaits, is about the call awaiting: it is taken (unsigned decisions are bound by callId alone).
    await handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'reject', by: 'ops', reason: 'not twice' }] });
    expect((await handle.result()).status).toBe('completed');
    expect(existsSync(accessLog(ws))).toBe(true);
  });
});

describe('a signed reconcile is taken once', () => {
  const { config } = writeStallingFsConfig(mkdtempSync(join(tmpdir(), 'attack-reconcile-')));
  let tools: WorkerTools;
  let worker: { taskQueue: string; shutdown(): Promise<void> };

  beforeAll(async () => {
    tools = await loadWorkerTools({ toolModules: [], toolNames: null, mcpConfigPath: config });
    // The MCP server's write needs alice's signature too.
    const withWrite: ApproverPolicy = { ...policy, tools: { ...policy.tools, fs_write: ['alice'] } };
    worker = await h.startWorker({ taskQueue: `attack-reconcile-${randomUUID().slice(0, 8)}`, toolset: tools.toolset, runDefaults: { approvers: withWrite } });
  });
  afterAll(async () => {
    await worker?.shutdown();
    await tools?.close();
  });

  it('a "retry" copied out of history, sent again when the same call parks again, is refused: the write is not tried a third time', async () => {
    const id = `attack-reconcile-${randomUUID().slice(0, 8)}`;
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', {
      taskQueue: worker.taskQueue,
      workflowId: id,
      args: [{ task: 'Write the report.', model: 'mcp', tools: ['fs_list', 'fs_write', 'fs_slow'], workspace: freshWorkspace(), toolTimeoutMs: 4000, unknownOutcomes: 'ask' }],
    });
    const run = new AgentClient({ client: h.client, taskQueue: worker.taskQueue }).getHandle(id);
    await waitForApproval(handle, 'c2');
    await run.approve('c2', { by: 'alice', key: aliceKey });
    const parks = (n: number) =>
      waitFor(`reconciliation ${n}`, async () => {
        const s = await handle.query(statusQuery);
        return s.agentStatus === 'awaiting_reconciliation' && h.trace(id).filter((l) => l.type === 'reconciliation_required').length === n ? s : null;
      });
    const first = await parks(1);
    expect(first.interruption).toMatchObject({ type: 'reconciliation', callId: 'c2', callKey: expect.stringMatching(/\/call\d+$/) });
    await run.reconcile('c2', { outcome: 'retry', by: 'alice', key: aliceKey });
    await parks(2);
    const copied = await copiedFromHistory(handle, 'reconcile', 'update');
    const replay = await updateByCli(id, 'reconcile', copied);
    expect(replay.refused).toBe(true);
    expect(replay.said).toContain('signature already used: this signed reconcile by "alice"');
    expect(h.trace(id).filter((l) => l.type === 'tool_start' && l.callId === 'c2')).toHaveLength(2);
    expect((await handle.query(statusQuery)).agentStatus).toBe('awaiting_reconciliation');
    await handle.signal(cancelSignal, { reason: 'attack test done' });
    await handle.result();
    expect(h.trace(id).filter((l) => l.type === 'tool_start' && l.callId === 'c2')).toHaveLength(2);
  });
});

describe('AGENT_APPROVERS in a team\'s worker (AgentPlugin)', () => {
  const envPolicy: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_file: ['alice'] } };
  // No retention pass: this worker shares the file's folders with the harness's.
  // The built-in tools and demo files the scenarios use, asked for (a team's worker offers neither by default).
  const options = () => ({ model: { baseUrl: h.providerUrl }, workspace: h.workspaceRoot, traceDir: h.traceDir, retention: { enabled: false }, builtinTools: true, seedFiles: SEED_FILES });
  const saved = { ...process.env };
  const withEnv = async <T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> => {
    Object.assign(process.env, vars);
    try {
      return await fn();
    } finally {
      for (const k of Object.keys(vars)) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  };

  it('is enforced: an unsigned approve is refused naming AGENT_APPROVERS and deletes nothing; a listed variable it does not read is named at start', async () => {
    const taskQueue = `attack-team-${randomUUID().slice(0, 8)}`;
    const warnings: string[] = [];
    const connection = await NativeConnection.connect({ address: h.address });
    const worker = await withEnv({ AGENT_APPROVERS: JSON.stringify(envPolicy), AGENT_DEFAULT_BUDGET_USD: '0.5' }, () =>
      Worker.create({
        connection,
        taskQueue,
        workflowBundle: { codePath: inject('workflowBundlePath') },
        plugins: [new AgentPlugin({ ...options(), log: { log: () => undefined, warn: (l: string) => void warnings.push(l) } })],
      }),
    );
    const running = worker.run();
    h.replayQueue(taskQueue);
    try {
      expect(warnings).toEqual(["AgentPlugin does not read AGENT_DEFAULT_BUDGET_USD (set in this process's environment): give option runDefaults.maxBudgetUsd instead, or unset it"]);
      const ws = freshWorkspace();
      const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: `attack-team-${ws}`, args: [{ task, model: 'destructive', workspace: ws }] });
      await waitForApproval(handle, 'c2');
      const said = await refusedUpdate(handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', by: 'alice' }] }));
      expect(said).toMatch(/^signature required: tool delete_file is listed in AGENT_APPROVERS \(may decide: alice\)/);
      expect(existsSync(accessLog(ws))).toBe(true);
      await new AgentClient({ client: h.client, taskQueue }).getHandle(handle.workflowId).approve('c2', { by: 'alice', key: aliceKey });
      expect((await handle.result()).status).toBe('completed');
      expect(existsSync(accessLog(ws))).toBe(false);
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  });

  it('AGENT_REQUIRE_ARGS_HASH is read the same way (it guards approvals too); listed variables given as options are not named', () => {
    const env = { AGENT_REQUIRE_ARGS_HASH: 'delete_file, fs_write', TRACE_DIR: '/elsewhere' };
    const read = pluginEnvironment(options(), env);
    expect(read.requireArgsHash).toEqual(['delete_file', 'fs_write']);
    expect(read.names.requireArgsHash).toBe('AGENT_REQUIRE_ARGS_HASH');
    // traceDir is given as an option: the variable is the team's business (it may be what the option was read from).
    expect(read.warning).toBeNull();
    expect(() => pluginEnvironment({ ...options(), runDefaults: { requireArgsHash: ['delete_file'] } }, env)).toThrow(
      'AgentPlugin option runDefaults.requireArgsHash and AGENT_REQUIRE_ARGS_HASH are both set: keep the option or the variable, not both',
    );
    expect(pluginEnvironment(options(), {}).names).toEqual(OPTION_NAMES);
  });

  it('both the option and the variable set: refused at start naming both; a policy from the variable is named by the variable, from the option by the option', async () => {
    await withEnv({ AGENT_APPROVERS: JSON.stringify(envPolicy) }, async () => {
      expect(() => new AgentPlugin({ ...options(), runDefaults: { approvers: envPolicy } })).toThrow(
        'AgentPlugin option runDefaults.approvers and AGENT_APPROVERS are both set: one approvers policy decides who may sign; keep the option or the variable, not both',
      );
      expect(() => new AgentPlugin(options())).not.toThrow();
    });
    await withEnv({ AGENT_APPROVERS: '{"approvers": {"alice": "short"}, "tools": {}}' }, async () => {
      expect(() => new AgentPlugin(options())).toThrow(/^AGENT_APPROVERS: approver "alice": "short" is not a base64 32-byte Ed25519 public key/);
    });
    const typo = { approvers: { alice: alice.publicKey }, tools: { delete_fle: ['alice'] } };
    const refusedAtCreate = async (plugin: () => AgentPlugin): Promise<string> => {
      const connection = await NativeConnection.connect({ address: h.address });
      try {
        const err = await Worker.create({ connection, taskQueue: `attack-typo-${randomUUID().slice(0, 8)}`, workflowBundle: { codePath: inject('workflowBundlePath') }, plugins: [plugin()] }).then(
          (w) => {
            void w;
            return null;
          },
          (e: unknown) => e,
        );
        return err instanceof Error ? err.message : 'Worker.create did not refuse';
      } finally {
        await connection.close();
      }
    };
    const fromEnv = await withEnv({ AGENT_APPROVERS: JSON.stringify(typo) }, () => refusedAtCreate(() => new AgentPlugin(options())));
    expect(fromEnv).toMatch(/^AGENT_APPROVERS lists tool "delete_fle", which this worker does not offer/);
    const fromOption = await refusedAtCreate(() => new AgentPlugin({ ...options(), runDefaults: { approvers: typo } }));
    expect(fromOption).toMatch(/^AgentPlugin option runDefaults.approvers lists tool "delete_fle", which this worker does not offer/);
  });
});
