// The effect protocol (activities/effects/protocol.ts) on both stores, real
// files and a real PostgreSQL (started here): a write acts once per key
// whatever retries, races, zombies and resets ask of it, and every answer
// says what really happened. Attempts are plain calls here (several "hosts"
// are several attempts on one store); the end-to-end tests with worker
// processes, a reset and an MCP server are test/effects-*.test.ts.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderEffectStore } from '../activities/effects/folder-store.js';
import { PostgresEffectStore } from '../activities/effects/postgres-store.js';
import { runWrite, type EffectGuard, type EffectNote, type WriteAttempt, type WriteCall } from '../activities/effects/protocol.js';
import type { EffectStore } from '../activities/effects/record.js';
import { NothingChanged, ToolError } from '../activities/tools/tool-error.js';
import { renderEvent } from '../client/render.js';
import { startPostgres, type TestPostgres } from './helpers/postgres.js';

let postgres: TestPostgres;
const stores: EffectStore[] = [];
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  for (const s of stores) await s.close();
  await postgres?.stop();
});

const makers: Record<'folder' | 'postgres', () => EffectStore> = {
  folder: () => new FolderEffectStore(mkdtempSync(join(tmpdir(), 'effects-'))),
  // A database per store: the store makes it on first use.
  postgres: () => PostgresEffectStore.open(postgres.url(`ledger_${Math.random().toString(36).slice(2, 10)}`)),
};

const attempt = (over: Partial<WriteAttempt> = {}): WriteAttempt => ({ workflowId: 'wf-1', runId: 'run-A', attempt: 1, worker: '101@host-a', ...over });

/** A write that counts how often it really acted. */
function counter() {
  let acted = 0;
  return {
    get acted() {
      return acted;
    },
    act: async (g: EffectGuard) => {
      await g.confirm();
      acted += 1;
      return `deleted access.log (#${acted})`;
    },
  };
}

describe.each(['folder', 'postgres'] as const)('the effect protocol on the %s store', (kind) => {
  let store: EffectStore;
  let n = 0;
  beforeAll(() => {
    store = makers[kind]();
    stores.push(store);
  });
  const notes: EffectNote[] = [];
  const call = (over: Partial<WriteCall> = {}): WriteCall => ({
    store,
    key: `wf-1@chain/k${n}`,
    toolName: 'delete_file',
    attempt: attempt(),
    deadline: Date.now() + 30_000,
    leaseMs: 2000,
    signal: new AbortController().signal,
    pastTense: 'deleted',
    note: (x) => notes.push(x),
    ...over,
  });
  const freshKey = () => `wf-1@chain/k${++n}`;

  it('acts once; a retry in the same run gets the recorded words, and nothing is done again', async () => {
    const key = freshKey();
    const w = counter();
    expect(await runWrite(call({ key }), w.act)).toEqual({ ok: true, content: 'deleted access.log (#1)' });
    expect(await runWrite(call({ key, attempt: attempt({ attempt: 2, worker: '202@host-b' }) }), w.act)).toEqual({ ok: true, content: 'deleted access.log (#1)' });
    expect(w.acted).toBe(1);
    expect((await store.read(key)).found?.record).toMatchObject({ state: 'done', holder: { runId: 'run-A', attempt: 1, worker: '101@host-a' } });
  });

  it('another run of the workflow (a reset) is told it was already done, by which run and when, not that it is done now', async () => {
    const key = freshKey();
    const w = counter();
    await runWrite(call({ key }), w.act);
    const doneAt = (await store.read(key)).found?.record.doneAt ?? 0;
    const out = await runWrite(call({ key, attempt: attempt({ runId: 'run-B' }) }), w.act);
    expect(out).toEqual({
      ok: true,
      content: `already deleted by run run-A at ${new Date(doneAt).toISOString()} (not deleted again): deleted access.log (#1)`,
      earlierRun: 'run-A',
    });
    expect(w.acted).toBe(1);
  });

  it('a claim whose holder went quiet is never acted on blind: the outcome is unknown, with who started it and when', async () => {
    const key = freshKey();
    // Attempt 1 claims and "dies" before it acts or reports (its act never returns).
    const first = runWrite(call({ key, leaseMs: 300, deadline: Date.now() + 200 }), () => new Promise<string>(() => {}));
    void first.catch(() => {});
    const claimed = await waitForRecord(store, key, 'claimed');
    const w = counter();
    const out = await runWrite(call({ key, attempt: attempt({ attempt: 2, worker: '202@host-b' }) }), w.act);
    expect(w.acted).toBe(0);
    expect(out).toEqual({
      ok: true,
      outcomeUnknown: true,
      content: `outcome unknown: a previous attempt on 101@host-a started this delete_file call at ${new Date(claimed.claimedAt).toISOString()} and did not report; it may or may not have happened. It was not tried again.`,
    });
    expect((await store.read(key)).found?.record).toMatchObject({ state: 'unknown', unknownBy: '202@host-b' });
    // And it stays so for every later attempt (and a reset run is told which run started it).
    expect(await runWrite(call({ key, attempt: attempt({ runId: 'run-B', attempt: 1 }) }), w.act)).toMatchObject({
      outcomeUnknown: true,
      content: expect.stringContaining('a previous attempt on 101@host-a (run run-A) started this delete_file call'),
    });
    expect(w.acted).toBe(0);
  });

  it('a live claim is waited for: the holder reports, and the waiting attempt answers with its result', async () => {
    const key = freshKey();
    let finish!: () => void;
    const held = new Promise<void>((r) => (finish = r));
    const slow = runWrite(call({ key }), async (g) => {
      await g.confirm();
      await held;
      return 'deleted access.log (slow)';
    });
    await waitForRecord(store, key, 'claimed');
    const w = counter();
    const second = runWrite(call({ key, attempt: attempt({ attempt: 2, worker: '202@host-b' }) }), w.act);
    setTimeout(finish, 300);
    expect(await second).toEqual({ ok: true, content: 'deleted access.log (slow)' });
    expect(await slow).toEqual({ ok: true, content: 'deleted access.log (slow)' });
    expect(w.acted).toBe(0);
  });

  it('a live claim that outlasts the waiting attempt fails it retryably (Temporal tries again later)', async () => {
    const key = freshKey();
    const holder = runWrite(call({ key, leaseMs: 60_000 }), () => new Promise<string>(() => {}));
    void holder.catch(() => {});
    await waitForRecord(store, key, 'claimed');
    const err = await runWrite(call({ key, attempt: attempt({ attempt: 2 }), deadline: Date.now() + 300 }), counter().act).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'EffectInProgress', nonRetryable: false, message: expect.stringContaining('attempt 1 on 101@host-a holds this call\'s claim until') });
  });

  it('a zombie whose claim was taken over does not act: the check right before acting refuses', async () => {
    const key = freshKey();
    let release!: () => void;
    const paused = new Promise<void>((r) => (release = r));
    let zombieActed = false;
    // The zombie's time runs out while it is paused before its irreversible step (a host cut off, a long GC).
    const zombie = runWrite(call({ key, leaseMs: 200, deadline: Date.now() + 2000 }), async (g) => {
      await paused;
      await g.confirm();
      zombieActed = true;
      return 'zombie deleted it';
    }).catch((e: unknown) => e);
    await waitForRecord(store, key, 'claimed');
    await waitUntil(async () => (await store.read(key)).now > ((await store.read(key)).found?.record.leaseUntil ?? 0) + 50);
    const taker = await runWrite(call({ key, attempt: attempt({ attempt: 2, worker: '202@host-b' }) }), counter().act);
    expect(taker).toMatchObject({ outcomeUnknown: true });
    release();
    const err = await zombie;
    expect(zombieActed).toBe(false);
    expect(err).toMatchObject({ type: 'EffectClaimLost', message: expect.stringContaining('this attempt did not act') });
    expect((await store.read(key)).found?.record.state).toBe('unknown');
  });

  it('a zombie that had already acted records its result late: the record then says what really happened', async () => {
    const key = freshKey();
    let release!: () => void;
    const paused = new Promise<void>((r) => (release = r));
    const zombie = runWrite(call({ key, leaseMs: 200, deadline: Date.now() + 2000 }), async (g) => {
      await g.confirm();
      // Acted, then paused before reporting, past its time and its lease.
      await paused;
      return 'deleted access.log (late)';
    });
    void zombie.catch(() => {});
    await waitForRecord(store, key, 'claimed');
    await waitUntil(async () => (await store.read(key)).now > ((await store.read(key)).found?.record.leaseUntil ?? 0) + 50);
    expect(await runWrite(call({ key, attempt: attempt({ attempt: 2 }) }), counter().act)).toMatchObject({ outcomeUnknown: true });
    release();
    expect(await zombie).toEqual({ ok: true, content: 'deleted access.log (late)' });
    expect((await store.read(key)).found?.record).toMatchObject({ state: 'done', late: true, outcome: { ok: true, content: 'deleted access.log (late)' } });
    expect(notes.at(-1)).toMatchObject({ verdict: 'late' });
    // Whoever asks next learns what happened.
    expect(await runWrite(call({ key, attempt: attempt({ attempt: 3 }) }), counter().act)).toEqual({ ok: true, content: 'deleted access.log (late)' });
  });

  it('an attempt out of time before it acted releases its claim (nobody took it over): the retry acts', async () => {
    const key = freshKey();
    const err = await runWrite(call({ key, deadline: Date.now() + 100 }), async (g) => {
      await new Promise((r) => setTimeout(r, 300));
      await g.confirm();
      return 'acted late';
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'EffectClaimLost', message: expect.stringContaining("attempt 1's time is up") });
    expect((await store.read(key)).found).toBeNull();
    const w = counter();
    expect(await runWrite(call({ key, attempt: attempt({ attempt: 2 }) }), w.act)).toEqual({ ok: true, content: 'deleted access.log (#1)' });
    expect(w.acted).toBe(1);
  });

  it('a tool that acted and then ran out of time still records what it did (the claim was still its own)', async () => {
    const key = freshKey();
    const out = await runWrite(call({ key, deadline: Date.now() + 1500 }), async (g) => {
      await g.confirm();
      await new Promise((r) => setTimeout(r, 2000));
      return 'deleted access.log (slowly)';
    });
    expect(out).toEqual({ ok: true, content: 'deleted access.log (slowly)' });
    expect((await store.read(key)).found?.record).toMatchObject({ state: 'done', outcome: { ok: true, content: 'deleted access.log (slowly)' } });
  });

  it('a tool of several steps that loses its claim after one has maybe acted: the outcome is unknown, not "did not act"', async () => {
    const key = freshKey();
    const out = await runWrite(call({ key, deadline: Date.now() + 1500 }), async (g) => {
      await g.confirm();
      // step 1 done; step 2 comes too late
      await new Promise((r) => setTimeout(r, 2000));
      await g.confirm();
      return 'both steps';
    });
    expect(out).toMatchObject({ outcomeUnknown: true, content: expect.stringContaining('got no answer (lost its claim after it began (attempt 1\'s time is up') });
    expect((await store.read(key)).found?.record.state).toBe('unknown');
  });

  it('attempts racing on one key (many hosts at once): exactly one acts, every other answers with its result', async () => {
    const key = freshKey();
    const w = counter();
    const outs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        // A lease far longer than the race: under load (eight fsyncing claims on a busy disk) the default 2 s lapsed before the winner acted, and a loser took it over, which is another test's subject.
        runWrite(call({ key, leaseMs: 60_000, attempt: attempt({ attempt: i + 1, worker: `${i}@host-${i}` }) }), async (g) => {
          const r = await w.act(g);
          await new Promise((res) => setTimeout(res, 100));
          return r;
        }),
      ),
    );
    expect(w.acted).toBe(1);
    expect(new Set(outs.map((o) => JSON.stringify(o)))).toEqual(new Set([JSON.stringify({ ok: true, content: 'deleted access.log (#1)' })]));
  });

  it('a failure before acting (NothingChanged) releases the claim: the error goes on, and a retry acts', async () => {
    const key = freshKey();
    await expect(runWrite(call({ key }), async () => Promise.reject(new NothingChanged(new Error('server unreachable'))))).rejects.toThrow('server unreachable');
    expect((await store.read(key)).found).toBeNull();
    expect(await runWrite(call({ key }), async () => Promise.reject(new NothingChanged(new ToolError('no such file: x'))))).toEqual({ ok: false, error: 'no such file: x', permanent: false });
    const w = counter();
    expect(await runWrite(call({ key, attempt: attempt({ attempt: 2 }) }), w.act)).toEqual({ ok: true, content: 'deleted access.log (#1)' });
    expect(w.acted).toBe(1);
  });

  it('a failure after acting began leaves the outcome unknown, said by the attempt itself, and no retry acts', async () => {
    const key = freshKey();
    const out = await runWrite(call({ key }), async (g) => {
      await g.confirm();
      throw new Error('the MCP server fs did not answer within 3000 ms');
    });
    expect(out).toMatchObject({
      ok: true,
      outcomeUnknown: true,
      content: expect.stringMatching(/^outcome unknown: this attempt on 101@host-a started this delete_file call at \S+ and got no answer \(the MCP server fs did not answer within 3000 ms\); it may or may not have happened/),
    });
    const w = counter();
    expect(await runWrite(call({ key, attempt: attempt({ attempt: 2 }) }), w.act)).toMatchObject({ outcomeUnknown: true });
    expect(w.acted).toBe(0);
    // A person chose to retry it: then it acts.
    expect(await runWrite(call({ key, attempt: attempt({ attempt: 3 }), retryUnknown: true }), w.act)).toEqual({ ok: true, content: 'deleted access.log (#1)' });
    expect(w.acted).toBe(1);
  });

  it('a Stop while acting stays a Stop, and the ledger says unknown for whoever asks next', async () => {
    const key = freshKey();
    const stop = new AbortController();
    const p = runWrite(call({ key, signal: stop.signal }), async (g) => {
      await g.confirm();
      stop.abort();
      throw new CancelledFailure('stopped mid-request');
    });
    await expect(p).rejects.toBeInstanceOf(CancelledFailure);
    expect((await store.read(key)).found?.record).toMatchObject({ state: 'unknown', unknownReason: 'the run was stopped while it ran' });
  });

  it('a ToolError after acting is the recorded outcome: a retry gets the same error', async () => {
    const key = freshKey();
    const fail = async (g: EffectGuard) => {
      await g.confirm();
      throw new ToolError('disk full after writing half', true);
    };
    expect(await runWrite(call({ key }), fail)).toEqual({ ok: false, error: 'disk full after writing half', permanent: true });
    expect(await runWrite(call({ key, attempt: attempt({ attempt: 2 }) }), counter().act)).toEqual({ ok: false, error: 'disk full after writing half', permanent: true });
    expect(await runWrite(call({ key, attempt: attempt({ runId: 'run-B' }) }), counter().act)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^run run-A already tried this at \S+ and it failed \(not tried again\): disk full after writing half$/),
      earlierRun: 'run-A',
    });
  });

  it('retention sees the records oldest first and removes them by key; size counts them', async () => {
    const before = await store.size();
    const key = freshKey();
    await runWrite(call({ key }), counter().act);
    const all = await store.oldest(Number.POSITIVE_INFINITY, 10_000);
    expect(all.map((r) => r.key)).toContain(key);
    expect(all.map((r) => r.claimedAt)).toEqual([...all.map((r) => r.claimedAt)].sort((a, b) => a - b));
    expect((await store.size()).records).toBe(before.records + 1);
    expect(await store.remove([key])).toBe(1);
    expect((await store.read(key)).found).toBeNull();
  });
});

describe('the CLI', () => {
  it('prints what the ledger decided when a person should know: unknown outcomes, earlier runs, late results', () => {
    const line = (fields: Record<string, unknown>) => renderEvent({ ts: '', runId: 'r', seq: 5, step: 0, attempt: 2, type: 'effect', toolName: 'delete_file', callId: 'c2', ...fields }, 'r');
    const holder = { runId: 'run-A', attempt: 1, worker: '101@host-a' };
    expect(line({ verdict: 'unknown', holder })).toBe('  ⚠ delete_file (call c2): outcome unknown: attempt 1 on 101@host-a started it and did not report; not done again');
    expect(line({ verdict: 'earlier_run', holder })).toBe('  ↺ delete_file (call c2): already done by run run-A; not done again');
    expect(line({ verdict: 'late' })).toMatch(/acted after another attempt had declared its outcome unknown/);
    expect(line({ verdict: 'acted' })).toBeNull();
  });
});

describe('the folder store on disk', () => {
  it('keeps one complete version file per key (no temp files left), and a record of the ledger before versions is honoured', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'effects-legacy-'));
    const store = new FolderEffectStore(dir);
    const w = counter();
    const call = (key: string): WriteCall => ({
      store,
      key,
      toolName: 'delete_file',
      attempt: attempt(),
      deadline: Date.now() + 30_000,
      leaseMs: 2000,
      signal: new AbortController().signal,
      pastTense: 'deleted',
    });
    await runWrite(call('k-new'), w.act);
    const h = createHash('sha256').update('k-new').digest('hex');
    // Claimed, renewed right before acting, done: only the latest version is kept, and no temp file.
    expect(readdirSync(join(dir, h.slice(0, 2), h))).toEqual([expect.stringMatching(/^\d+\.json$/)]);
    // A worker of the previous version recorded these (one file per key beside the folders).
    const legacy = (key: string, entry: object) => writeFileSync(join(dir, `${createHash('sha256').update(key).digest('hex')}.json`), JSON.stringify({ key, ...entry }));
    legacy('k-old-done', { state: 'done', at: '2026-01-01T00:00:00.000Z', result: 'deleted access.log' });
    legacy('k-old-started', { state: 'started', at: '2026-01-01T00:00:00.000Z' });
    expect(await runWrite(call('k-old-done'), w.act)).toEqual({ ok: true, content: 'deleted access.log' });
    expect(await runWrite(call('k-old-started'), w.act)).toMatchObject({ outcomeUnknown: true });
    expect(w.acted).toBe(1);
  });
});

async function waitForRecord(store: EffectStore, key: string, state: string) {
  for (let i = 0; i < 600; i++) {
    const r = (await store.read(key)).found?.record;
    if (r?.state === state) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`no ${state} record for ${key}`);
}

async function waitUntil(probe: () => Promise<boolean>) {
  for (let i = 0; i < 1000; i++) {
    if (await probe()) return;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error('condition never held');
}
