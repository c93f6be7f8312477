// Signed decisions (AGENT_APPROVERS): with a policy listing delete_file for
// alice, only alice's valid signature over this run, this call, this decision
// and these arguments, before it expires, moves the parked call. Every other
// decision (unsigned, forged, signed by a key not listed for the tool,
// replayed for another call, run or decision, expired) is refused by the
// update's validator with its reason, or traced signal_ignored as a signal,
// and the call stays parked: a valid one still works after them. Through
// AgentClient, our CLI, a raw update and a raw signal (the `temporal` CLI).
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import fc from 'fast-check';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { argsHash, canonicalJson } from '../common/args-hash.js';
import { approveSignal, cancelSignal, decideUpdate, raiseBudgetUpdate, statusQuery, steerSignal, steerUpdate } from '../common/run-messages.js';
import { signOther } from '../client/signing.js';
import {
  fromBase64,
  newKeyPair,
  parseApproverPolicy,
  signatureProblem,
  signDecision,
  signedMessage,
  toBase64,
  verifySignature,
  type ApproverPolicy,
  type SignedFields,
} from '../common/signed-decision.js';
import { AgentClient } from '../client/agent-client.js';
import { main } from '../client/cli.js';
import { privateKeyOf } from '../client/signing.js';
import { pluginOptionsFromEnv } from '../worker/env-options.js';
import { publicKeyOf } from '../common/signed-decision.js';
import { readFileSync, statSync } from 'node:fs';
import { policyToolProblem } from '../worker/agent-plugin.js';
import { ENV_NAMES, OPTION_NAMES } from '../worker/setting-names.js';
import { freshWorkspace, useHarness, waitFor, waitForApproval } from './helpers/harness.js';
import { temporalCli, temporalOk } from './helpers/temporal-cli.js';
import type { agentRun } from '../workflows/index.js';
import { propertyParams } from './helpers/property.js';

const h = useHarness();
const task = 'Which file mentions a timeout?';
const ARGS_HASH = argsHash({ path: 'access.log' });
const alice = newKeyPair();
const bob = newKeyPair();
const mallory = newKeyPair();
const key = (k: { privateKey: string }) => privateKeyOf(k.privateKey);
const policy: ApproverPolicy = {
  approvers: { alice: alice.publicKey, bob: bob.publicKey },
  tools: { delete_file: ['alice'] },
  decisions: { steer: ['alice'], raiseBudget: ['alice'] },
};
const inAMinute = () => new Date(Date.now() + 60_000).toISOString();

/** The callKey of the call each run parked on (its status's interruption.callKey), by workflow id. */
const callKeys = new Map<string, string>();

/** The signed payload fields of a decision on c2 (what AgentClient and the CLI send). */
function signed(workflowId: string, o: Partial<SignedFields> & { signWith?: Uint8Array } = {}): SignedFields & { signature: string } {
  const { signWith, ...over } = o;
  const fields: SignedFields = { argsHash: ARGS_HASH, by: 'alice', callId: 'c2', callKey: callKeys.get(workflowId) ?? `${workflowId}@chain/call2`, decision: 'approve', expiresAt: inAMinute(), toolName: 'delete_file', workflowId, ...over };
  return { ...fields, signature: signDecision(fields, signWith ?? key(alice)) };
}

describe('canonical JSON, sign and verify (properties)', () => {
  const fields = fc.record({
    argsHash: fc.stringMatching(/^[0-9a-f]{64}$/),
    by: fc.string({ minLength: 1 }),
    callId: fc.string(),
    callKey: fc.string(),
    decision: fc.constantFrom('approve' as const, 'reject' as const, 'steer' as const, 'raiseBudget' as const, 'reconcile' as const),
    expiresAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    toolName: fc.string(),
    workflowId: fc.string({ minLength: 1 }),
  });
  const seed = fc.uint8Array({ minLength: 32, maxLength: 32 });

  it('canonical JSON is the same text for any key order, sorted, without spaces, and parses back to the value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = canonicalJson(v);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
        if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
          const reversed = Object.fromEntries(Object.entries(v).reverse());
          expect(canonicalJson(reversed)).toBe(text);
        }
      }),
      propertyParams(),
    );
  });

  it('the signed message is the canonical JSON of exactly the signed fields (the contract\'s six, callKey and toolName)', () => {
    fc.assert(
      fc.property(fields, fc.string(), (f, extra) => {
        const text = new TextDecoder().decode(signedMessage({ ...f, ...({ extra } as object) } as SignedFields));
        expect(Object.keys(JSON.parse(text) as object)).toEqual(['argsHash', 'by', 'callId', 'callKey', 'decision', 'expiresAt', 'toolName', 'workflowId']);
        expect(text).toBe(canonicalJson(f));
      }),
      propertyParams(),
    );
  });

  it('a signature verifies with its key over its fields, and with no other key nor over any changed field', () => {
    fc.assert(
      fc.property(fields, seed, seed, fc.constantFrom<keyof SignedFields>('argsHash', 'by', 'callId', 'callKey', 'decision', 'expiresAt', 'toolName', 'workflowId'), fc.string({ minLength: 1 }), (f, s1, s2, field, junk) => {
        const k1 = newKeyPair(s1);
        const sig = signDecision(f, privateKeyOf(k1.privateKey));
        expect(verifySignature(f, sig, k1.publicKey)).toBe(true);
        if (toBase64(s1) !== toBase64(s2)) expect(verifySignature(f, sig, newKeyPair(s2).publicKey)).toBe(false);
        const changed = { ...f, [field]: `${String(f[field])}${junk}` } as SignedFields;
        expect(verifySignature(changed, sig, k1.publicKey)).toBe(false);
      }),
      propertyParams(60),
    );
  });

  it('base64 round-trips any bytes; junk is refused, not decoded', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (b) => {
        // The same text as Node's encoder (what a script signing by hand would send), and back.
        expect(toBase64(b)).toBe(Buffer.from(b).toString('base64'));
        expect(Array.from(fromBase64(toBase64(b)) ?? [-1])).toEqual(Array.from(b));
      }),
      propertyParams(),
    );
    expect(fromBase64('not base64!')).toBeNull();
    expect(verifySignature({ argsHash: ARGS_HASH, by: 'a', callId: 'c', callKey: 'w@r/call1', decision: 'approve', expiresAt: inAMinute(), toolName: 'delete_file', workflowId: 'w' }, 'AAAA', alice.publicKey)).toBe(false);
  });

  it('the checker names each reason', () => {
    const now = Date.now();
    const expected = { argsHash: ARGS_HASH, callId: 'c2', callKey: 'w1@chain/call2', decision: 'approve' as const, toolName: 'delete_file', workflowId: 'w1' };
    const check = (sent: unknown) => signatureProblem(policy, ['alice'], 'tool delete_file', expected, sent, now);
    expect(check(signed('w1'))).toBeNull();
    expect(check({ by: 'alice' })).toMatch(/^signature required/);
    expect(check({ ...signed('w1'), signature: signed('w1', { signWith: key(mallory) }).signature })).toMatch(/^signature does not verify/);
    expect(check(signed('w1', { by: 'bob', signWith: key(bob) }))).toBe('approver "bob" is not listed for tool delete_file (may decide: alice)');
    expect(check(signed('w1', { by: 'mallory', signWith: key(mallory) }))).toMatch(/^approver "mallory" is not listed/);
    expect(check(signed('w2', { callKey: 'w1@chain/call2' }))).toMatch(/^signature is for another run/);
    expect(check(signed('w1', { callKey: 'w1@other-chain/call2' }))).toMatch(/^signature is for another run of this workflow id: signed for run chain "w1@other-chain", this is "w1@chain"/);
    expect(check(signed('w1', { callKey: 'w1@chain/call1' }))).toMatch(/^signature is for another call: signed for "w1@chain\/call1"/);
    expect(check(signed('w1', { toolName: 'scan_archive' }))).toMatch(/^signature is for another tool: signed for "scan_archive", this call is "delete_file"/);
    expect(check(signed('w1', { decision: 'reject' }))).toMatch(/^signature is for another decision/);
    expect(check({ ...signed('w1', { callId: 'c1' }), callId: 'c2' })).toMatch(/^signature does not verify/);
    expect(check(signed('w1', { expiresAt: new Date(now - 1).toISOString() }))).toMatch(/^signature expired at /);
    // Rotation: both keys listed, either verifies.
    const rotated: ApproverPolicy = { ...policy, approvers: { ...policy.approvers, alice: [mallory.publicKey, alice.publicKey] } };
    expect(signatureProblem(rotated, ['alice'], 'tool delete_file', expected, signed('w1'), now)).toBeNull();
  });

  it('keygen writes a private key file (mode 600) whose public key it prints with a policy snippet; AGENT_APPROVERS reads that policy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keygen-'));
    const out: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
    try {
      expect(await main(['keygen', '--out', join(dir, 'alice.key'), '--name', 'alice'])).toBe(0);
      // Never overwritten: a second keygen to the same file is a usage error.
      expect(await main(['keygen', '--out', join(dir, 'alice.key')])).toBe(2);
    } finally {
      log.mockRestore();
    }
    const file = join(dir, 'alice.key');
    const pub = publicKeyOf(privateKeyOf(readFileSync(file, 'utf8')));
    expect(out.join('\n')).toContain(`public key: ${pub}`);
    const snippet = JSON.parse(out.join('\n').slice(out.join('\n').indexOf('{'))) as unknown;
    expect(snippet).toEqual({ approvers: { alice: pub }, tools: { delete_file: ['alice'] } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const policyFile = join(dir, 'approvers.json');
    writeFileSync(policyFile, JSON.stringify(snippet));
    expect(pluginOptionsFromEnv({ AGENT_APPROVERS: policyFile }).plugin.runDefaults?.approvers).toEqual(snippet);
    expect(pluginOptionsFromEnv({ AGENT_APPROVERS: JSON.stringify(snippet) }).plugin.runDefaults?.approvers).toEqual(snippet);
    expect(() => pluginOptionsFromEnv({ AGENT_APPROVERS: join(dir, 'missing.json') })).toThrow(/AGENT_APPROVERS file .*missing\.json cannot be read/);
  });

  it('a policy file with a bad key or an unknown approver stops the worker naming it', () => {
    expect(() => parseApproverPolicy({ approvers: { alice: 'short' }, tools: {} }, 'f')).toThrow(/alice.*not a base64 32-byte/);
    expect(() => parseApproverPolicy({ approvers: { alice: alice.publicKey }, tools: { delete_file: ['zed'] } }, 'f')).toThrow(/"zed", who is not in "approvers"/);
    expect(() => parseApproverPolicy({ approvers: {}, tools: {}, decisions: { cancel: [] } }, 'f')).toThrow(/may list raiseBudget, reconcile, steer/);
  });
});

describe('a worker with AGENT_APPROVERS', () => {
  const queue = `signed-${randomUUID().slice(0, 8)}`;
  const openQueue = `signed-open-${randomUUID().slice(0, 8)}`;
  let workers: { shutdown(): Promise<void> }[] = [];
  let agent: AgentClient;
  const dir = mkdtempSync(join(tmpdir(), 'signed-'));
  const keyFile = (name: string, k: { privateKey: string }) => {
    const p = join(dir, `${name}.key`);
    writeFileSync(p, `# test key\n${k.privateKey}\n`, { mode: 0o600 });
    return p;
  };

  beforeAll(async () => {
    workers = [
      await h.startWorker({ taskQueue: queue, runDefaults: { approvers: policy } }),
      // A policy that lists another tool: delete_file is decided unsigned, as ever.
      await h.startWorker({ taskQueue: openQueue, runDefaults: { approvers: { approvers: { alice: alice.publicKey }, tools: { scan_archive: ['alice'] } } } }),
    ];
    agent = new AgentClient({ client: h.client, taskQueue: queue });
  });
  afterAll(async () => {
    for (const w of workers) await w.shutdown();
  });

  async function parked(ws = freshWorkspace(), taskQueue = queue): Promise<{ handle: WorkflowHandle; ws: string }> {
    const id = `signed-${ws}`;
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue, workflowId: id, args: [{ task, model: 'destructive', workspace: ws }] });
    await waitForApproval(handle, 'c2');
    // What a signer reads from the status beside argsHash: the occurrence it signs for.
    const parkedOn = (await handle.query(statusQuery)).interruption;
    callKeys.set(id, parkedOn?.type === 'approval' ? (parkedOn.callKey ?? '') : '');
    return { handle, ws };
  }
  const runKey = async (handle: WorkflowHandle<typeof agentRun>) => (await handle.query(statusQuery)).runKey ?? '';
  const refusal = async (handle: WorkflowHandle, input: object) => {
    const p = handle.executeUpdate(decideUpdate, { args: [{ callId: 'c2', decision: 'approve', ...input }] as never });
    await expect(p).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    return ((await p.catch((e: WorkflowUpdateFailedError) => e)) as WorkflowUpdateFailedError).cause?.message ?? '';
  };
  const rejectSigned = (handle: WorkflowHandle<typeof agentRun>) => handle.executeUpdate(decideUpdate, { args: [{ ...signed(handle.workflowId, { decision: 'reject' }), decision: 'reject' }] });
  const stillParked = async (handle: WorkflowHandle, ws: string) => {
    expect(await handle.query(statusQuery)).toMatchObject({ status: 'interrupted', interruption: { type: 'approval', callId: 'c2' }, toolRuns: 1 });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(true);
  };
  const deleted = async (handle: WorkflowHandle, ws: string) => {
    const r = await handle.result();
    expect(r).toMatchObject({ status: 'completed', output: 'Deleted access.log to free space.' });
    expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
  };

  it('the run records the policy (public keys only) in its configuration', async () => {
    const { handle } = await parked();
    const cfg = await agent.getHandle(handle.workflowId).config();
    expect(cfg.approvers).toEqual(policy);
    expect(JSON.stringify(cfg)).not.toContain(alice.privateKey);
    // Our CLI's reject, signed with alice's key file.
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const id = handle.workflowId;
    try {
      expect(await main(['reject', id, 'c2', '--by', 'alice', '--key', keyFile('alice', alice), '--reason', 'needed for the audit', '--expires-in-ms', '60000'], h.client)).toBe(0);
    } finally {
      log.mockRestore();
    }
    expect((await handle.result()).status).toBe('completed');
    expect(h.trace(id).find((l) => l.type === 'approval_decided')).toMatchObject({ decision: 'reject', by: 'alice', reason: 'needed for the audit' });
  });

  it('the update refuses unsigned, forged, unlisted, replayed and expired decisions with their reasons; the call stays parked; AgentClient then approves', async () => {
    const { handle, ws } = await parked();
    const id = handle.workflowId;
    const other = await parked();
    const reasons = {
      unsigned: await refusal(handle, { by: 'alice' }),
      forged: await refusal(handle, { ...signed(id), signature: signed(id, { signWith: key(mallory) }).signature }),
      unlisted: await refusal(handle, signed(id, { by: 'bob', signWith: key(bob) })),
      otherCall: await refusal(handle, { ...signed(id, { callId: 'c1' }), callId: 'c2' }),
      otherRun: await refusal(handle, signed(other.handle.workflowId)),
      otherRunUnnamed: await refusal(handle, (({ workflowId: _w, ...rest }) => rest)(signed(other.handle.workflowId))),
      otherDecision: await refusal(handle, { ...signed(id, { decision: 'reject' }), decision: 'approve' }),
      otherArgs: await refusal(handle, signed(id, { argsHash: argsHash({ path: 'errors.log' }) })),
      expired: await refusal(handle, signed(id, { expiresAt: new Date(Date.now() - 1000).toISOString() })),
    };
    expect(reasons.unsigned).toMatch(/^signature required: tool delete_file is listed in AGENT_APPROVERS/);
    expect(reasons.forged).toMatch(/^signature does not verify/);
    expect(reasons.unlisted).toBe('approver "bob" is not listed for tool delete_file (may decide: alice)');
    expect(reasons.otherCall).toMatch(/^signature does not verify/);
    expect(reasons.otherRun).toMatch(/^signature is for another run/);
    expect(reasons.otherRunUnnamed).toMatch(/^signature does not verify/);
    expect(reasons.otherDecision).toMatch(/^signature does not verify/);
    // The plainer reason first: the arguments named are not the call's.
    expect(reasons.otherArgs).toMatch(/^argsHash mismatch/);
    expect(reasons.expired).toMatch(/^signature expired at \d{4}-\d\d-\d\dT/);
    await stillParked(handle, ws);

    // The steer update is listed too: unsigned refused, alice's signed message queued.
    const runHandle = agent.getHandle(id);
    await expect(runHandle.steer('hold on', { by: 'alice' })).rejects.toThrow(/signature required: steer is listed/);
    await expect(runHandle.steer('hold on', { by: 'bob', key: key(bob) })).rejects.toThrow(/approver "bob" is not listed for steer/);
    expect((await runHandle.steer('hold on', { by: 'alice', key: key(alice) })).queuedSteers).toHaveLength(1);

    // AgentClient signs (the argsHash read from the status); a wrong key through it is refused too.
    await expect(runHandle.approve('c2', { by: 'alice', key: key(mallory) })).rejects.toThrow(/signature does not verify/);
    const view = await runHandle.approve('c2', { by: 'alice', key: alice.privateKey });
    expect(view.interruption).toBeNull();
    await deleted(handle, ws);
    await rejectSigned(other.handle);
  });

  it('signals: refused ones are traced signal_ignored with the reason and change nothing; a valid signal approves', async () => {
    const { handle, ws } = await parked();
    const id = handle.workflowId;
    await handle.signal(approveSignal, { callId: 'c2', by: 'alice' });
    await handle.signal(approveSignal, { ...signed(id, { by: 'bob', signWith: key(bob) }) });
    // A whole reject payload replayed as approve: named as another decision.
    await handle.signal(approveSignal, { ...signed(id, { decision: 'reject' }) });
    await handle.signal(approveSignal, signed(id, { expiresAt: new Date(Date.now() - 1000).toISOString() }));
    const ignored = await waitFor('four ignored signals', () => {
      const lines = h.trace(id).filter((l) => l.type === 'signal_ignored');
      return lines.length === 4 ? lines : null;
    });
    expect(ignored.map((l) => l.reason)).toEqual([
      expect.stringMatching(/^signature required/),
      'approver "bob" is not listed for tool delete_file (may decide: alice)',
      expect.stringMatching(/^signature is for another decision: signed "reject", this is "approve"/),
      expect.stringMatching(/^signature expired at/),
    ]);
    await stillParked(handle, ws);
    // The raw signal by the real `temporal` CLI, a hand-made signature.
    await temporalOk(h.address, 'workflow', 'signal', '--workflow-id', id, '--name', 'approve', '--input', JSON.stringify(signed(id)));
    await deleted(handle, ws);
  });

  it('a raw `temporal workflow update execute`: refused with the reason, then a valid one applies', async () => {
    const { handle, ws } = await parked();
    const id = handle.workflowId;
    const bad = await temporalCli(h.address, 'workflow', 'update', 'execute', '--workflow-id', id, '--name', 'decide', '--input', JSON.stringify({ ...signed(id, { by: 'bob', signWith: key(bob) }), decision: 'approve' }));
    expect(bad.code).not.toBe(0);
    expect(`${bad.stderr}${bad.stdout}`).toContain('approver "bob" is not listed for tool delete_file');
    await stillParked(handle, ws);
    await temporalOk(h.address, 'workflow', 'update', 'execute', '--workflow-id', id, '--name', 'decide', '--input', JSON.stringify({ ...signed(id), decision: 'approve' }));
    await deleted(handle, ws);
  });

  it('our CLI signs with --key: a key not listed is refused (exit 1, the reason), the listed one approves', async () => {
    const { handle, ws } = await parked();
    const id = handle.workflowId;
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void errors.push(a.join(' ')));
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await main(['approve', id, 'c2', '--by', 'alice', '--key', keyFile('mallory', mallory)], h.client)).toBe(1);
      expect(await main(['approve', id, 'c2', '--by', 'bob', '--key', keyFile('bob', bob)], h.client)).toBe(1);
      expect(errors.join('\n')).toMatch(/signature does not verify[\s\S]*approver "bob" is not listed for tool delete_file/);
      await stillParked(handle, ws);
      expect(await main(['approve', id, 'c2', '--by', 'alice', '--key', keyFile('alice', alice)], h.client)).toBe(0);
    } finally {
      spy.mockRestore();
      log.mockRestore();
    }
    await deleted(handle, ws);
  });

  it('raiseBudget when the policy lists it: unsigned or with a tampered amount refused; AgentClient signed raise applies', async () => {
    const id = `signed-hard-${randomUUID().slice(0, 8)}`;
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: id, args: [{ task: 'Keep listing.', model: 'runaway', limits: { maxTurns: 40, maxBudgetUsd: 0.005, budgetMode: 'hard' } }] });
    await waitFor('the run parked awaiting_budget', async () => ((await handle.query(statusQuery)).agentStatus === 'awaiting_budget' ? true : null));
    const refusedWith = async (input: object) => {
      const p = handle.executeUpdate(raiseBudgetUpdate, { args: [input as never] });
      await expect(p).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
      return ((await p.catch((e: WorkflowUpdateFailedError) => e)) as WorkflowUpdateFailedError).cause?.message ?? '';
    };
    expect(await refusedWith({ maxBudgetUsd: 0.05, by: 'alice' })).toMatch(/^signature required: raiseBudget is listed/);
    const signedRaise = signOther({ maxBudgetUsd: 0.008, by: 'alice' }, { workflowId: id, decision: 'raiseBudget', by: 'alice', callKey: await runKey(handle), key: key(alice) });
    expect(await refusedWith({ ...signedRaise, maxBudgetUsd: 0.05 })).toMatch(/^signature does not verify/);
    expect((await handle.query(statusQuery)).agentStatus).toBe('awaiting_budget');
    const view = await agent.getHandle(id).raiseBudget(0.008, { by: 'alice', key: key(alice) });
    expect(view.budget?.raises.at(-1)).toMatchObject({ toUsd: 0.008, by: 'alice' });
    await handle.signal(cancelSignal, { reason: 'done' });
    await handle.result();
  });

  it('a signed steer is taken once: the same payload again is refused (update) or traced signal_ignored (signal); a newly signed one is queued', async () => {
    const { handle } = await parked();
    const id = handle.workflowId;
    const steer = signOther({ message: 'look in logs/ first', by: 'alice' }, { workflowId: id, decision: 'steer', by: 'alice', callKey: await runKey(handle), key: key(alice) });
    expect((await handle.executeUpdate(steerUpdate, { args: [steer] })).queuedSteers).toHaveLength(1);
    const again = handle.executeUpdate(steerUpdate, { args: [steer] });
    await expect(again).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    expect(((await again.catch((e: WorkflowUpdateFailedError) => e)) as WorkflowUpdateFailedError).cause?.message).toMatch(/^signature already used: this signed steer by "alice" \(expires \d{4}-.*\) was taken once/);
    await handle.signal(steerSignal, steer);
    const ignored = await waitFor('the replayed signal ignored', () => h.trace(id).find((l) => l.type === 'signal_ignored') ?? null);
    expect(ignored).toMatchObject({ signal: 'steer', reason: expect.stringMatching(/^signature already used/) });
    // The same words signed again are a new message: queued beside the first.
    const resigned = signOther({ message: 'look in logs/ first', by: 'alice' }, { workflowId: id, decision: 'steer', by: 'alice', callKey: await runKey(handle), key: key(alice), expiresInMs: 120_000 });
    expect((await handle.executeUpdate(steerUpdate, { args: [resigned] })).queuedSteers).toHaveLength(2);
    expect(h.trace(id).filter((l) => l.type === 'steer_queued')).toHaveLength(2);
    await rejectSigned(handle);
    await handle.result();
  });

  it('a signed steer taken before continue-as-new is refused after it (the signatures cross executions)', async () => {
    const id = `signed-can-${randomUUID().slice(0, 8)}`;
    // A tiny history threshold: the run continues as new after every turn.
    const handle = await h.client.workflow.start<typeof agentRun>('agentRun', { taskQueue: queue, workflowId: id, args: [{ task: 'Keep listing files.', model: 'runaway', continueAsNewAtHistoryBytes: 1024, limits: { maxTurns: 400, maxBudgetUsd: null } }] });
    try {
      // The run chain is the first execution's run id: the steer stays bound to it across continue-as-new.
      const steer = signOther({ message: 'stop after this one', by: 'alice' }, { workflowId: id, decision: 'steer', by: 'alice', callKey: `${id}@${handle.firstExecutionRunId}`, key: key(alice) });
      await handle.signal(steerSignal, steer);
      const queued = await waitFor('the steer queued', () => h.trace(id).find((l) => l.type === 'steer_queued') ?? null);
      await waitFor('a continue-as-new after it', () => h.trace(id).find((l) => l.type === 'continued_as_new' && Number(l.seq) > Number(queued.seq)) ?? null);
      // The trace line is written as the run decides to continue; the server has the next execution once that task completes.
      await waitFor('the next execution on the server', async () => ((await handle.describe()).runId !== handle.firstExecutionRunId ? true : null));
      await handle.signal(steerSignal, steer);
      const ignored = await waitFor('the replayed signal ignored', () => h.trace(id).find((l) => l.type === 'signal_ignored') ?? null);
      expect(ignored).toMatchObject({ signal: 'steer', reason: expect.stringMatching(/^signature already used/) });
      await handle.signal(cancelSignal, { reason: 'done' });
      await handle.result();
      expect(h.trace(id).filter((l) => l.type === 'steered')).toHaveLength(1);
    } finally {
      // A failed check must not leave a run continuing as new after every turn (the file's replay would chase it).
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('the test failed before it stopped the run');
    }
  });

  it('a policy naming a tool the worker does not offer (a typo) stops the worker at start, naming it and the tools offered', async () => {
    const typo: ApproverPolicy = { approvers: { alice: alice.publicKey }, tools: { delete_fle: ['alice'], delete_file: ['alice'] } };
    await expect(h.startWorker({ taskQueue: `signed-typo-${randomUUID().slice(0, 8)}`, runDefaults: { approvers: typo } })).rejects.toThrow(
      'AGENT_APPROVERS lists tool "delete_fle", which this worker does not offer (it offers: list_files, read_file, delete_file, scan_archive, research): a tool the policy does not name is decided unsigned, so fix the name, or offer the tool (AGENT_TOOLS)',
    );
    // A team's worker (AgentPlugin) names its options; every tool offered: no problem.
    expect(policyToolProblem({ ...typo, tools: { a: [], b: [], read_file: [] } }, ['read_file'], OPTION_NAMES)).toBe(
      'AgentPlugin option runDefaults.approvers lists tools "a", "b", which this worker does not offer (it offers: read_file): a tool the policy does not name is decided unsigned, so fix the name, or offer the tool (AgentPlugin option only)',
    );
    expect(policyToolProblem(policy, ['list_files', 'read_file', 'delete_file'], ENV_NAMES)).toBeNull();
    expect(policyToolProblem(undefined, [], ENV_NAMES)).toBeNull();
  });

  it('a run started before the policy takes decisions unsigned, even on a worker that has one', async () => {
    const q = `signed-before-${randomUUID().slice(0, 8)}`;
    const before = await h.startWorker({ taskQueue: q });
    const { handle, ws } = await parked(freshWorkspace(), q);
    await before.shutdown();
    workers.push(await h.startWorker({ taskQueue: q, runDefaults: { approvers: policy } }));
    expect((await handle.query(statusQuery)).interruption).toMatchObject({ callId: 'c2' });
    await handle.signal(approveSignal, { callId: 'c2', by: 'anyone' });
    await deleted(handle, ws);
  });

  it('a tool the policy does not list is decided unsigned, as before the policy', async () => {
    const { handle, ws } = await parked(freshWorkspace(), openQueue);
    await handle.signal(approveSignal, { callId: 'c2', by: 'anyone' });
    await deleted(handle, ws);
  });
});
