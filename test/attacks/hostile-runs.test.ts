// The attack suite's property: whatever a hostile model, caller or operator
// sends, a run ends in one of the five exits or stays parked answering
// queries (and then a Stop ends it), the worker's memory stays bounded, and
// nothing outside the run's workspace changes.
//
// Each case is a real run on the shared dev server, on this file's worker,
// against the real scripted provider: the model's replies are generated
// (`reply` faults, dev/provider/faults.ts: call ids, names, argument text and
// content verbatim), and so are the start input, and the signals, updates,
// queries and raw payloads sent at the start of the run and again while it is
// parked. The workspace holds links out of it (`ext` to a folder outside,
// `up` to the workspaces' root, `readme.txt` to a secret outside) and a
// sibling workspace holds a file no run may touch.
//
// ATTACK_RUNS=N runs N cases (default 16; each is a run of about a second);
// ATTACK_SEED=<seed> (printed with a failure) replays a failing case.
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import fc from 'fast-check';
import { createHash, randomUUID } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ensureWorkspace } from '../../activities/tools/workspace.js';
import type { AgentInput, RunResult, RunStatusView } from '../../common/contract.js';
import { cancelSignal, statusQuery, transcriptQuery } from '../../common/run-messages.js';
import type { ScriptedReply } from '../../dev/provider/scenarios.js';
import { addFault, clearFaults, marker, useHarness, waitFor } from '../helpers/harness.js';
import type { agentRun } from '../../workflows/index.js';

const h = useHarness();

const envInt = (name: string, fallback: number): number => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(v)}`);
  return n;
};
const RUNS = envInt('ATTACK_RUNS', 16);
const SEED = process.env.ATTACK_SEED ? envInt('ATTACK_SEED', 0) : undefined;

const EXITS = ['completed', 'failed', 'max_turns_exceeded', 'budget_exceeded', 'interrupted'] as const;
/** Peak RSS the worker's process may gain over the whole property: a decompression bomb unpacked once is 200 MB, on every retry more. */
const MAX_RSS_GROWTH_MB = 600;

// --- what lies outside every run's workspace, and how to tell it did not change

const outside = mkdtempSync(join(tmpdir(), 'attack-outside-'));
writeFileSync(join(outside, 'secret.env'), 'API_KEY=sk-attack-canary-0451\n');
writeFileSync(join(outside, 'keep.txt'), 'must survive every run\n');
mkdirSync(join(outside, 'sub'));
writeFileSync(join(outside, 'sub', 'deep.txt'), 'deep\n');
const SECRET = 'sk-attack-canary-0451';

/** Every entry below a folder: kind, size, content hash, link target; links are not followed. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[r] = `link:${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[r] = 'dir';
        walk(p, r);
      } else out[r] = `file:${st.size}:${createHash('sha256').update(readFileSync(p)).digest('hex').slice(0, 16)}`;
    }
  };
  walk(dir, '');
  return out;
}

// A sibling workspace no run is given: `up/victim/…` from a run's workspace reaches it.
const victim = 'victim';
ensureWorkspace(h.workspaceRoot, victim);

/** A fresh workspace with the seed files and the links out of it. */
function hostileWorkspace(): string {
  const name = `ws-${randomUUID().slice(0, 8)}`;
  const dir = ensureWorkspace(h.workspaceRoot, name);
  symlinkSync(outside, join(dir, 'ext'));
  symlinkSync('..', join(dir, 'up'));
  symlinkSync(join(outside, 'secret.env'), join(dir, 'readme.txt'));
  writeFileSync(join(dir, '.env'), `TOKEN=${SECRET}\n`);
  return name;
}

// --- generated hostility

/** Paths a tool may be asked for: inside, through each link, out by `..`, absolute, encoded tricks. */
const hostilePath = fc.constantFrom(
  'errors.log',
  'notes.txt',
  'readme.txt',
  '.env',
  'ext/keep.txt',
  'ext/secret.env',
  'ext/sub/deep.txt',
  'ext/newdir/pwned.txt',
  'up/victim/errors.log',
  'up/victim/notes.txt',
  'up',
  'ext',
  '../victim/errors.log',
  '../../etc/passwd',
  join(outside, 'keep.txt'),
  '/etc/hostname',
  'errors.log\u0000.txt',
  'ext/../../victim/notes.txt',
  '.',
  '',
  '\u202eext/keep.txt',
  'ext\uff0fkeep.txt',
);

/** Any JSON value, with the sizes and depths an attacker would pick. */
const deep = (depth: number, leaf: string): string => '['.repeat(depth) + leaf + ']'.repeat(depth);
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, -1, 0, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 0.1 + 0.2, '', '\u0000', '💣'.repeat(100)) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 120_000 }).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 2_000 }).map((d) => JSON.parse(deep(d, '1')) as unknown) },
  { weight: 1, arbitrary: hostilePath },
);

/** A string a model might put where an id or a name goes. */
const hostileId = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('c1', 'c2', 's0_0', 'call_1') },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\u0000', 'c2\n', '../c2', 'c2/../../x', '日本語の呼び出し識別子') },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 6_000 }).map((n) => 'c'.repeat(n)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
);

const toolName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('list_files', 'read_file', 'delete_file', 'scan_archive') },
  { weight: 1, arbitrary: fc.constantFrom('', 'READ_FILE', 'read_file ', '__proto__', 'constructor', 'x'.repeat(3_000)) },
);

/** The argument text of a call: valid objects with hostile values, broken JSON, huge, deep. */
const argumentText = fc.oneof(
  { weight: 5, arbitrary: fc.record({ path: hostilePath }, { requiredKeys: [] }).map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: fc.dictionary(fc.constantFrom('path', 'root', 'pattern', '__proto__', 'constructor', 'extra'), hostileJson, { maxKeys: 3 }).map((o) => JSON.stringify(o)) },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '{"path": "errors.log"', 'null', '[]', '"x"', '1e400', '{"path": 1e400}', '{"__proto__": {"path": "ext/keep.txt"}}') },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 6_000 }).map((d) => `{"path": "errors.log", "x": ${deep(d, '0')}}`) },
  { weight: 1, arbitrary: fc.integer({ min: 16_000, max: 40_000 }).map((n) => JSON.stringify({ path: 'a'.repeat(n) })) },
);

const hostileCall = fc.record({ id: hostileId, name: toolName, arguments: argumentText });

const hostileReply: fc.Arbitrary<ScriptedReply> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('raw_calls' as const), calls: fc.array(hostileCall, { minLength: 1, maxLength: 3 }), content: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('answer' as const), content: fc.oneof(fc.string({ maxLength: 500 }), fc.constant(''), fc.integer({ min: 10_000, max: 300_000 }).map((n) => 'y'.repeat(n))) }) },
);

/** A start input: a valid one with some fields replaced by hostile values. */
const baseInput = (m: string, workspace: string): AgentInput => ({
  task: `Look around the workspace. ${m}`,
  model: 'plan',
  tools: ['list_files', 'read_file', 'delete_file', 'scan_archive'],
  limits: { maxTurns: 6 },
  workspace,
});
const inputFields = ['task', 'model', 'tools', 'limits', 'workspace', 'system', 'toolErrors', 'dedupe', 'approvalTimeoutMs', 'context', 'forkFrom', 'pricing', 'runContext', '__proto__', 'extra'] as const;
const inputMutation = fc.oneof(
  { weight: 5, arbitrary: fc.constant(null) },
  {
    weight: 2,
    arbitrary: fc.dictionary(
      fc.constantFrom(...inputFields),
      fc.oneof(hostileJson, hostilePath, fc.record({ maxTurns: hostileJson, maxBudgetUsd: hostileJson }, { requiredKeys: [] })),
      { minKeys: 1, maxKeys: 3 },
    ),
  },
);

type Message =
  | { kind: 'signal'; name: string; arg: unknown }
  | { kind: 'update'; name: string; arg: unknown }
  | { kind: 'query'; name: string; arg: unknown }
  | { kind: 'raw'; name: string; encoding: string; data: 'garbage' | 'bomb' | 'empty' | 'json' };

const NAMES = ['approve', 'reject', 'decide', 'steer', 'raiseBudget', 'reconcile', 'cancel'] as const;
/** A decision-shaped payload with hostile fields, or any JSON at all. */
const messageArg = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        callId: hostileId,
        decision: fc.constantFrom('approve', 'reject', 'APPROVE', '', 'maybe'),
        by: hostileId,
        reason: fc.oneof(fc.string({ maxLength: 50 }), hostileJson),
        argsHash: fc.oneof(fc.constant('0'.repeat(64)), fc.string({ maxLength: 70 })),
        message: fc.oneof(fc.string({ maxLength: 100 }), hostileJson),
        maxBudgetUsd: hostileJson,
        outcome: fc.constantFrom('happened', 'retry', 'x'),
        interrupt: fc.oneof(fc.boolean(), hostileJson),
        signature: fc.oneof(fc.base64String({ maxLength: 100 }), fc.string({ maxLength: 100 })),
        expiresAt: fc.oneof(fc.constant('2999-01-01T00:00:00.000Z'), fc.string({ maxLength: 30 })),
        workflowId: hostileId,
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: hostileJson },
);
const message: fc.Arbitrary<Message> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('signal' as const), name: fc.constantFrom(...NAMES, 'approve ', 'unknown'), arg: messageArg }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('update' as const), name: fc.constantFrom('decide', 'steer', 'raiseBudget', 'reconcile', 'unknown'), arg: messageArg }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('query' as const), name: fc.constantFrom('status', 'transcript', 'unknown'), arg: messageArg }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('raw' as const),
      name: fc.constantFrom('approve', 'steer', 'cancel', 'reject'),
      encoding: fc.constantFrom('binary/gzip', 'binary/encrypted', 'json/plain', 'binary/unknown', ''),
      data: fc.constantFrom('garbage' as const, 'bomb' as const, 'empty' as const, 'json' as const),
    }),
  },
);

/** The run's workflow id: ours, or one a caller picked (long, not ASCII, with slashes and dots). */
const workflowIdOf = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('日本語のワークフロー識別子です日本語のワークフロー識', 'w'.repeat(900), 'a/b/../../c', ' spaced .. id ', '..') },
);

const hostileCase = fc.record({
  workflowId: workflowIdOf,
  replies: fc.array(hostileReply, { minLength: 1, maxLength: 4 }),
  mutation: inputMutation,
  atStart: fc.array(message, { maxLength: 4 }),
  whileParked: fc.array(message, { maxLength: 4 }),
});
type HostileCase = typeof hostileCase extends fc.Arbitrary<infer T> ? T : never;

// --- sending it

const encoder = new TextEncoder();
/**
 * The decompression bomb: 200 gzip members of 1 MiB of zeros each, 205 KB
 * that unpack to 200 MiB (gunzip reads concatenated members as one stream).
 * Made from 1 MiB pieces, so the test's own peak memory does not grow by 200 MiB.
 */
let bombBytes: Uint8Array | null = null;
const bomb = () => (bombBytes ??= Buffer.concat(Array.from({ length: 200 }, () => gzipSync(Buffer.alloc(1024 * 1024), { level: 9 }))));

function rawPayload(m: Extract<Message, { kind: 'raw' }>): temporal.api.common.v1.IPayload {
  const data =
    m.data === 'bomb' ? bomb() : m.data === 'garbage' ? encoder.encode('\u0001\u0002not a payload\u00ff') : m.data === 'json' ? encoder.encode('{"callId": "c2", "by": "mallory"') : new Uint8Array();
  const metadata: Record<string, Uint8Array> = { encoding: encoder.encode(m.encoding) };
  if (m.encoding === 'binary/encrypted') metadata['encryption-key-id'] = encoder.encode('no-such-key');
  return { metadata, data };
}

/** Sends one message; what the run answers (a refusal, an error) is the run's business, not a failure of the property. */
async function send(handle: WorkflowHandle<typeof agentRun>, m: Message): Promise<void> {
  try {
    if (m.kind === 'signal') await handle.signal(m.name, m.arg);
    else if (m.kind === 'update') await withDeadline(handle.executeUpdate(m.name, { args: [m.arg] }));
    else if (m.kind === 'query') await handle.query(m.name, m.arg);
    else {
      await h.client.workflowService.signalWorkflowExecution({
        namespace: 'default',
        workflowExecution: { workflowId: handle.workflowId },
        signalName: m.name,
        input: { payloads: [rawPayload(m)] },
        identity: 'attack-suite',
      });
    }
  } catch {
    // Refused, failed, or the run already closed: all fine here; the checks below judge the run.
  }
}

/** An update the run holds (a decision applied when the loop waits) must not hold the test: it answers or the run moves on. */
async function withDeadline<T>(p: Promise<T>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 10_000)));
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const PARKED = new Set(['awaiting_approval', 'awaiting_budget', 'awaiting_reconciliation']);

/** Open and answering: its status; closed: null. A run open that does not answer its status query fails the property. */
async function liveStatus(handle: WorkflowHandle<typeof agentRun>): Promise<RunStatusView | null> {
  const d = await handle.describe();
  if (d.status.name !== 'RUNNING') return null;
  try {
    return await handle.query(statusQuery);
  } catch (err) {
    const again = await handle.describe();
    if (again.status.name !== 'RUNNING') return null;
    throw new Error(`the run is open and does not answer its status query: ${String(err)}`);
  }
}

/** The run's exit: its result's status, or `failed` for a run refused as a workflow failure with a typed error (InvalidInput). */
async function exitOf(handle: WorkflowHandle<typeof agentRun>): Promise<{ status: string; detail: string; result: boolean }> {
  try {
    const r: RunResult = await handle.result();
    return { status: r.status, detail: r.errorType ? `${r.errorType}: ${r.error ?? ''}` : (r.error ?? ''), result: true };
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure && err.cause.type) return { status: 'failed', detail: `${err.cause.type}: ${err.cause.message}`, result: false };
    const d = await handle.describe();
    return { status: `workflow ${d.status.name}`, detail: String(err), result: false };
  }
}

/** How the cases ended, printed after the property: what the generated hostility reached (parked runs, each exit, refused starts). */
const tally = new Map<string, number>();
const count = (what: string) => tally.set(what, (tally.get(what) ?? 0) + 1);

async function runCase(c: HostileCase): Promise<void> {
  const before = snapshot(outside);
  const victimBefore = snapshot(join(h.workspaceRoot, victim));
  const m = marker();
  const ws = hostileWorkspace();
  for (const [turn, reply] of c.replies.entries()) await addFault(h.providerUrl, { match: { taskIncludes: m, turn }, fault: { type: 'reply', reply }, times: 1 });
  const input = { ...baseInput(m, ws), ...(c.mutation ?? {}) } as AgentInput;
  let handle: WorkflowHandle<typeof agentRun>;
  try {
    handle = await h.start(input, c.workflowId === undefined ? undefined : `${c.workflowId}${m}`);
  } catch (err) {
    // The client refused to send it (a value its converter cannot encode): nothing reached the server.
    expect(String(err)).not.toMatch(/internal/i);
    count('not sent by the client');
    await clearFaults(h.providerUrl, m);
    return;
  }
  for (const msg of c.atStart) await send(handle, msg);

  // Ends, or parks: either way it answers its status query while open.
  let cancelled = false;
  const settled = await waitFor(`run ${handle.workflowId} to end or park`, async () => {
    const s = await liveStatus(handle);
    if (s === null) return 'closed';
    return PARKED.has(s.agentStatus) ? 'parked' : null;
  });
  if (settled === 'parked') {
    count('parked');
    for (const msg of c.whileParked) await send(handle, msg);
    // Still answering (liveStatus throws if not); then a Stop ends it, however many times it parks again.
    await liveStatus(handle);
    await waitFor(`run ${handle.workflowId} to end after a Stop`, async () => {
      const s = await liveStatus(handle);
      if (s === null) return true;
      if (!cancelled || PARKED.has(s.agentStatus)) {
        await handle.signal(cancelSignal, { reason: 'attack suite: Stop' });
        cancelled = true;
      }
      return null;
    });
  }
  const exit = await exitOf(handle);
  count(exit.status === 'failed' ? `failed ${/^(\w+):/.exec(exit.detail)?.[1] ?? 'run'}` : exit.status);
  expect(EXITS as readonly string[], `run ${handle.workflowId} ended ${exit.status}: ${exit.detail}`).toContain(exit.status);
  await clearFaults(h.providerUrl, m);
  // A run that returned its result left a trace that says how it ended.
  if (exit.result) expect(h.trace(handle.workflowId).map((l) => l.type), `trace of ${handle.workflowId}`).toContain('run_stopped');

  // Nothing outside the workspace changed; no secret reached the model.
  expect(snapshot(outside)).toEqual(before);
  expect(snapshot(join(h.workspaceRoot, victim))).toEqual(victimBefore);
  const transcript = await handle.query(transcriptQuery).catch(() => []);
  expect(JSON.stringify(transcript)).not.toContain(SECRET);
}

/** The issue's reproductions, run first in every property run beside the generated cases (test/attacks/*.test.ts hold each as a test of its own). */
const REPRODUCTIONS: HostileCase[] = [
  // A call id over the search attribute's 2,048 bytes on a call that parks.
  { workflowId: undefined, replies: [{ type: 'raw_calls', calls: [{ id: 'c'.repeat(5_001), name: 'delete_file', arguments: '{"path": "notes.txt"}' }] }], mutation: null, atStart: [], whileParked: [] },
  // A link to a secret outside the workspace, read by its innocent name.
  { workflowId: undefined, replies: [{ type: 'raw_calls', calls: [{ id: 'c1', name: 'read_file', arguments: '{"path": "readme.txt"}' }] }], mutation: null, atStart: [], whileParked: [] },
  // A deletion through a link out of the workspace, approved by whoever is asked.
  {
    workflowId: undefined,
    replies: [{ type: 'raw_calls', calls: [{ id: 'c2', name: 'delete_file', arguments: '{"path": "ext/keep.txt"}' }] }],
    mutation: null,
    atStart: [],
    whileParked: [{ kind: 'signal', name: 'approve', arg: { callId: 'c2', by: 'mallory' } }],
  },
  // Arguments 5,000 deep, inside the 16 KiB cap.
  { workflowId: undefined, replies: [{ type: 'raw_calls', calls: [{ id: 'c1', name: 'list_files', arguments: `{"x": ${deep(5_000, '0')}}` }] }], mutation: null, atStart: [], whileParked: [] },
  // A signal that says gzip and is not, sent while the run waits for a person.
  {
    workflowId: undefined,
    replies: [{ type: 'raw_calls', calls: [{ id: 'c2', name: 'delete_file', arguments: '{"path": "notes.txt"}' }] }],
    mutation: null,
    atStart: [],
    whileParked: [{ kind: 'raw', name: 'approve', encoding: 'binary/gzip', data: 'garbage' }],
  },
  // The bomb, at start.
  { workflowId: undefined, replies: [{ type: 'answer', content: 'done' }], mutation: null, atStart: [{ kind: 'raw', name: 'steer', encoding: 'binary/gzip', data: 'bomb' }], whileParked: [] },
  // A workspace that climbs out of the root.
  { workflowId: undefined, replies: [{ type: 'answer', content: 'done' }], mutation: { workspace: '../victim' }, atStart: [], whileParked: [] },
  // A 27-character Japanese workflow id: its trace file's name is over 255 bytes.
  {
    workflowId: '日本語のワークフロー識別子です日本語のワークフロー識',
    replies: [{ type: 'raw_calls', calls: [{ id: 'c1', name: 'list_files', arguments: '{}' }] }],
    mutation: null,
    atStart: [],
    whileParked: [],
  },
];

describe('hostile runs (property)', () => {
  it(`${RUNS} generated runs: each ends in one of the five exits or parks answering queries, memory bounded, nothing outside its workspace changed`, async () => {
    const startRss = process.resourceUsage().maxRSS / 1024;
    await fc.assert(fc.asyncProperty(hostileCase, runCase), { numRuns: RUNS + REPRODUCTIONS.length, examples: REPRODUCTIONS.map((c) => [c]), ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true });
    const grewMb = process.resourceUsage().maxRSS / 1024 - startRss;
    console.info(`hostile runs: ${[...tally].map(([k, n]) => `${k} ${n}`).join(', ')}; peak RSS grew ${grewMb.toFixed(0)} MB`);
    expect(grewMb, `peak RSS grew by ${grewMb.toFixed(0)} MB over ${RUNS} hostile runs`).toBeLessThan(MAX_RSS_GROWTH_MB);
  }, 900_000);
});
