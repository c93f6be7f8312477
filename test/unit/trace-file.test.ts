// The trace writer keeps one line per key: replays and redone tasks never duplicate.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readTrace, traceChains, traceFile, type TraceEntry } from '../../node/trace-format.js';
import { STALE_LOCK_MS, TraceWriter, type TraceWrite } from '../../activities/trace-file.js';
import { TraceBatch } from '../../worker/sinks.js';
import { propertyParams } from '../helpers/property.js';

describe('TraceWriter', () => {
  it('drops a line it already has, replaces one a redone task changed, and survives a new process', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-unit-'));
    const w = new TraceWriter(dir);
    expect(w.write('r/1', 'chain-a', { seq: 1, type: 'run_started' })).toBe('appended');
    expect(w.write('r/1', 'chain-a', { seq: 2, type: 'run_stopped', status: 'interrupted' })).toBe('appended');
    expect(w.write('r/1', 'chain-a', { seq: 1, type: 'run_started' })).toBe('duplicate');
    expect(w.write('r/1', 'chain-a', { seq: 2, type: 'signal_ignored', signal: 'cancel' })).toBe('replaced');
    // A second writer (another worker process) sees what the first wrote.
    const w2 = new TraceWriter(dir);
    expect(w2.write('r/1', 'chain-a', { seq: 2, type: 'signal_ignored', signal: 'cancel' })).toBe('duplicate');
    expect(w2.write('r/1', 'chain-a', { seq: 3, type: 'run_stopped', status: 'interrupted' })).toBe('appended');
    expect(w.write('r/1', 'chain-a', { seq: 3, type: 'run_stopped', status: 'interrupted' })).toBe('duplicate');
    // Progress lines hang under their tool_start's seq, keyed by attempt and step.
    expect(w.write('r/1', 'chain-a', { seq: 2, step: 1, attempt: 1, type: 'tool_progress', label: 'a' })).toBe('appended');
    expect(w.write('r/1', 'chain-a', { seq: 2, step: 1, attempt: 2, type: 'tool_progress', label: 'a' })).toBe('appended');
    const lines = readTrace(dir, 'r/1', 'chain-a');
    // Read in seq order: activity lines follow the workflow line they hang under.
    expect(lines.map((l) => [l.seq, l.type])).toEqual([
      [1, 'run_started'],
      [2, 'signal_ignored'],
      [2, 'tool_progress'],
      [2, 'tool_progress'],
      [3, 'run_stopped'],
    ]);
    expect(lines.every((l) => l.runId === 'r/1' && typeof l.ts === 'string')).toBe(true);
  });

  it('holds at most 256 files in memory, and a forgotten file still drops what it has', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-bound-'));
    const w = new TraceWriter(dir);
    for (let i = 0; i < 600; i++) w.write(`run-${i}`, 'c', { seq: 1, type: 'run_started' });
    expect(w.filesInMemory).toBe(256);
    // run-0 was forgotten long ago: its file is read again, the duplicate dropped.
    expect(w.write('run-0', 'c', { seq: 1, type: 'run_started' })).toBe('duplicate');
    expect(w.write('run-0', 'c', { seq: 2, type: 'run_stopped' })).toBe('appended');
    expect(readTrace(dir, 'run-0', 'c').map((l) => l.seq)).toEqual([1, 2]);
  });

  it('a replayed event only fills a missing line, never replaces one, and is read in its place', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-replay-'));
    const w = new TraceWriter(dir);
    w.write('r', 'c', { seq: 2, type: 'turn', turn: 1 });
    w.write('r', 'c', { seq: 3, type: 'run_stopped' });
    // A line the first attempt never wrote, seen again only as "replaying".
    expect(w.write('r', 'c', { seq: 1, type: 'run_started' }, { onlyIfMissing: true })).toBe('appended');
    expect(w.write('r', 'c', { seq: 2, type: 'turn', turn: 99 }, { onlyIfMissing: true })).toBe('duplicate');
    expect(readTrace(dir, 'r', 'c').map((l) => [l.seq, l.type, l.turn])).toEqual([
      [1, 'run_started', undefined],
      [2, 'turn', 1],
      [3, 'run_stopped', undefined],
    ]);
  });

  it('a workflow id used again gets a file of its own; with several, no timestamp picks one for the reader', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-chains-'));
    const w = new TraceWriter(dir);
    w.write('order-7', 'later-run', { seq: 1, type: 'run_started' });
    w.write('order-7', 'first-run', { seq: 1, type: 'run_started' });
    w.write('order-7', 'first-run', { seq: 2, type: 'run_stopped', status: 'completed' });
    // Name order: which run is current is the server's to say (client/run-history.ts latestChain).
    expect(traceChains(dir, 'order-7')).toEqual(['first-run', 'later-run']);
    expect(() => readTrace(dir, 'order-7')).toThrow('order-7 has the traces of 2 runs (chains first-run, later-run): name one');
    expect(readTrace(dir, 'order-7', 'first-run').map((l) => l.type)).toEqual(['run_started', 'run_stopped']);
    // Another id that merely starts with the same characters is not mixed in.
    w.write('order-7.x', 'third', { seq: 1, type: 'run_started' });
    expect(traceChains(dir, 'order-7')).toEqual(['first-run', 'later-run']);
    // One chain on disk: read without naming it (and without a server).
    w.write('order-8', 'only', { seq: 1, type: 'run_started' });
    expect(readTrace(dir, 'order-8').map((l) => l.type)).toEqual(['run_started']);
  });

  it('breaks the lock of a writer that died, and one older than STALE_LOCK_MS; leaves no lock behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-lock-'));
    const w = new TraceWriter(dir);
    const lock = `${traceFile(dir, 'r', 'c')}.lock`;
    // A process of this host that has exited: its pid is free.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(lock, `${dead} ${hostname()} ${Date.now()}`);
    expect(w.write('r', 'c', { seq: 1, type: 'run_started' })).toBe('appended');
    expect(existsSync(lock)).toBe(false);
    // Alive (this process), or on another host: only its age tells, and it is past the limit.
    writeFileSync(lock, `${process.pid} another-host 0`);
    const old = (Date.now() - STALE_LOCK_MS - 1000) / 1000;
    utimesSync(lock, old, old);
    expect(w.write('r', 'c', { seq: 2, type: 'run_stopped' })).toBe('appended');
    expect(existsSync(lock)).toBe(false);
    expect(readTrace(dir, 'r', 'c').map((l) => l.seq)).toEqual([1, 2]);
  });

  it('a reader skips a line still being appended (no newline yet)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-partial-'));
    new TraceWriter(dir).write('r', 'c', { seq: 1, type: 'run_started' });
    writeFileSync(traceFile(dir, 'r', 'c'), '{"seq":2,"type":"tu', { flag: 'a' });
    expect(readTrace(dir, 'r', 'c').map((l) => l.seq)).toEqual([1]);
  });

  // The invariant the batched sink rests on: a batch of lines written
  // together leaves the file, and answers each line, exactly as writing them
  // one by one does: order, duplicates, redone lines replaced in place,
  // replayed lines only ever added. Over generated batches that reuse keys.
  it('writeAll of a batch leaves the same file and outcomes as write() of each line in turn', () => {
    const entry: fc.Arbitrary<TraceWrite> = fc.record({
      event: fc.oneof(
        fc.record({ seq: fc.integer({ min: 1, max: 4 }), type: fc.constantFrom('turn', 'tool_start', 'run_stopped') }),
        fc.record({ seq: fc.integer({ min: 1, max: 3 }), step: fc.integer({ min: 0, max: 2 }), attempt: fc.integer({ min: 1, max: 2 }), type: fc.constant('tool_progress'), label: fc.constantFrom('a', 'b') }),
      ) as fc.Arbitrary<TraceEntry>,
      onlyIfMissing: fc.boolean(),
    });
    const content = (dir: string) => readFileSync(traceFile(dir, 'r', 'c'), 'utf8').split('\n').filter(Boolean).map((l) => { const { ts: _ts, ...rest } = JSON.parse(l) as { ts: string }; return rest; });
    fc.assert(
      fc.property(fc.array(fc.array(entry, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }), (batches) => {
        const one = mkdtempSync(join(tmpdir(), 'trace-one-'));
        const all = mkdtempSync(join(tmpdir(), 'trace-all-'));
        const w1 = new TraceWriter(one);
        const w2 = new TraceWriter(all);
        for (const batch of batches) {
          const singly = batch.map((e) => w1.write('r', 'c', e.event, { onlyIfMissing: e.onlyIfMissing }));
          expect(w2.writeAll('r', 'c', batch)).toEqual(singly);
        }
        expect(content(all)).toEqual(content(one));
        expect(existsSync(`${traceFile(all, 'r', 'c')}.lock`)).toBe(false);
      }),
      propertyParams(100),
    );
  });

  it('the sink writes the lines of one tick in one batch per trace, in order, and settles once they are on disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-batch-'));
    const w = new TraceWriter(dir);
    const calls: number[] = [];
    const writeAll = w.writeAll.bind(w);
    w.writeAll = (id, chain, entries) => (calls.push(entries.length), writeAll(id, chain, entries));
    const batch = new TraceBatch(w);
    // As the SDK makes a task's sink calls: one after another, then it waits for all.
    const done = [
      batch.add('r', 'c', { event: { seq: 1, type: 'turn' } }),
      batch.add('other', 'c', { event: { seq: 1, type: 'run_started' } }),
      batch.add('r', 'c', { event: { seq: 2, type: 'tool_start' } }),
      batch.add('r', 'c', { event: { seq: 3, type: 'tool_result' } }),
    ];
    expect(existsSync(traceFile(dir, 'r', 'c'))).toBe(false);
    await Promise.all(done);
    expect(readTrace(dir, 'r', 'c').map((l) => l.type)).toEqual(['turn', 'tool_start', 'tool_result']);
    expect(readTrace(dir, 'other', 'c').map((l) => l.type)).toEqual(['run_started']);
    expect(calls.sort()).toEqual([1, 3]);
    // The next task's lines: a batch of their own, after the first.
    await batch.add('r', 'c', { event: { seq: 4, type: 'run_stopped' } });
    expect(readTrace(dir, 'r', 'c').map((l) => l.seq)).toEqual([1, 2, 3, 4]);
  });

  it('a batch that cannot be written rejects every call of it (the SDK logs each), and the next batch writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-batch-fail-'));
    const w = new TraceWriter(dir);
    const batch = new TraceBatch(w);
    // A directory where the trace file should be: the append fails.
    mkdirSync(traceFile(dir, 'r', 'c'), { recursive: true });
    const failed = await Promise.allSettled([batch.add('r', 'c', { event: { seq: 1, type: 'turn' } }), batch.add('r', 'c', { event: { seq: 2, type: 'tool_start' } })]);
    expect(failed.map((f) => f.status)).toEqual(['rejected', 'rejected']);
    expect(existsSync(`${traceFile(dir, 'r', 'c')}.lock`)).toBe(false);
    await batch.add('r', 'c2', { event: { seq: 1, type: 'turn' } });
    expect(readTrace(dir, 'r', 'c2').map((l) => l.type)).toEqual(['turn']);
  });
});
