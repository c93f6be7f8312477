// The server fails under runs in flight: the history service process is
// killed with SIGKILL and started again, or PostgreSQL crashes (no checkpoint)
// and comes back. At that moment one run is mid-tool (the slow scan), one is
// parked on an approval, and one is inside its delete — intent recorded in
// the ledger, file not yet removed — which then lands while the server is
// down, so its completion reaches the server only after the restart (and a
// retry of it, if the server timed the attempt out meanwhile, finds the
// ledger's result instead of acting). Every run finishes as it would have,
// nothing recorded is lost, and no write acts twice: the delete reaches its
// irreversible step once per run (counted at that step), each call's
// executions are distinct attempts, the ledger holds one finished entry per
// delete, and the files are gone.
import type { WorkflowHandle } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FolderEffectStore } from '../../activities/effects/folder-store.js';
import { approveSignal } from '../../common/run-messages.js';
import { AGENT_AWAITING_CALL } from '../../common/search-attributes.js';
import type { TraceLine } from '../../node/trace-format.js';
import { freshWorkspace, useHarness, waitFor } from '../helpers/harness.js';
import { crashPostgres, killService, startPostgres, startService } from './faults.js';

const h = useHarness({ worker: false });

/** A gate at delete_file's last step before the unlink: counts arrivals, holds the first until opened. */
function commitGate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((r) => (open = r));
  let arrivals = 0;
  return {
    hooks: {
      beforeCommit: async () => {
        arrivals += 1;
        if (arrivals === 1) await opened;
      },
    },
    arrivals: () => arrivals,
    open,
  };
}

/** Retries a client call the recovering server refuses (Unavailable, a shard not yet owned). */
async function untilAccepted<T>(what: string, f: () => Promise<T>): Promise<T> {
  let last: unknown;
  return waitFor(what, async () => {
    try {
      return { v: await f() };
    } catch (e) {
      last = e;
      return null;
    }
  }, 180_000).then((r) => r.v, (e: Error) => Promise.reject(new Error(`${e.message}; last error: ${String(last)}`)));
}

const parkedOn = (handle: WorkflowHandle, callId: string) =>
  waitFor(`${handle.workflowId} parked on ${callId}`, async () => (await handle.describe()).typedSearchAttributes.get(AGENT_AWAITING_CALL) === callId);

/** The ledger's records for one run, read through the folder store the worker writes (one folder of versions per key). */
async function ledgerEntries(workflowId: string): Promise<{ key: string; state: string }[]> {
  const store = new FolderEffectStore(join(h.workspaceRoot, '.ledger'));
  return (await store.oldest(Number.POSITIVE_INFINITY, 100_000)).filter((r) => r.workflowId === workflowId);
}

const workflowLines = (t: TraceLine[]) => t.filter((l) => l.step === undefined);

async function underFault(crash: () => Promise<unknown>, recover: () => Promise<unknown>) {
  const gate = commitGate();
  const worker = await h.startWorker({ writeHooks: gate.hooks });
  try {
    const scan = await h.start({ task: 'Scan the archive.', model: 'slow' });
    const [parkedWs, writingWs] = [freshWorkspace(), freshWorkspace()];
    const parked = await h.start({ task: 'Free some disk space.', model: 'destructive', workspace: parkedWs });
    const writing = await h.start({ task: 'Free some disk space.', model: 'destructive', workspace: writingWs });
    await parkedOn(writing, 'c2');
    await writing.signal(approveSignal, { callId: 'c2', by: 'ops' });
    await waitFor('the approved delete at its last step', () => gate.arrivals() === 1);
    await waitFor('the scan under way', () => h.trace(scan.workflowId).some((l) => l.type === 'tool_progress'));
    await parkedOn(parked, 'c2');

    await crash();
    gate.open();
    await waitFor('the held delete to land while the server is down', async () => (await ledgerEntries(writing.workflowId)).some((e) => e.state === 'done'));
    await recover();

    await untilAccepted('the approval after the fault', () => parked.signal(approveSignal, { callId: 'c2', by: 'ops' }));
    const results = await Promise.all([scan, parked, writing].map((r) => untilAccepted(`${r.workflowId}'s result`, () => r.result())));
    expect(results[0]).toMatchObject({ status: 'completed', turns: 2, toolRuns: 1 });
    for (const r of results.slice(1)) expect(r).toMatchObject({ status: 'completed', turns: 3, toolRuns: 2, output: 'Deleted access.log to free space.' });

    // Two deletes, two irreversible steps: neither run's delete acted twice.
    expect(gate.arrivals()).toBe(2);
    for (const [run, ws] of [[parked, parkedWs], [writing, writingWs]] as const) {
      expect(existsSync(join(h.workspaceRoot, ws, 'access.log'))).toBe(false);
      expect((await ledgerEntries(run.workflowId)).map((e) => e.state)).toEqual(['done']);
    }
    for (const run of [scan, parked, writing]) {
      await waitFor('run_stopped in the trace', () => h.events(run.workflowId).some((l) => l.type === 'run_stopped'));
      const trace = h.trace(run.workflowId);
      const lines = workflowLines(trace);
      // Nothing lost, nothing twice: seq 1..n, one start, one stop, one result per tool call.
      expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
      expect(lines.filter((l) => l.type === 'run_started')).toHaveLength(1);
      const results = lines.filter((l) => l.type === 'tool_result').map((l) => String(l.callId));
      expect(results).toEqual([...new Set(results)]);
      // A call runs again only as a new attempt (a retry), never the same attempt twice.
      const attempts = new Map<string, number[]>();
      for (const e of trace.filter((l) => l.type === 'tool_exec')) attempts.set(String(e.callId), [...(attempts.get(String(e.callId)) ?? []), Number(e.attempt)]);
      for (const list of attempts.values()) expect(list).toEqual([...new Set(list)].sort((x, y) => x - y));
    }
  } finally {
    gate.open();
    await worker.shutdown();
  }
}

describe('the server fails under runs in flight', () => {
  it('the history service process is killed (SIGKILL) and started again', async () => {
    await underFault(() => killService('history'), () => startService('history'));
  });

  it('PostgreSQL crashes and comes back on its data', async () => {
    await underFault(crashPostgres, startPostgres);
  });
});
