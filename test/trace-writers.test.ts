// Two real processes write one run's trace at once (as two workers do when a
// sticky queue moves or a restart overlaps the old process) while a third
// reads it: no line lost, none twice, seq order kept, in every snapshot the
// reader took and in the file at the end.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isStale, STALE_LOCK_MS } from '../activities/trace-file.js';
import { lineKey, readTrace } from '../node/trace-format.js';
import { PROJECT_ROOT } from '../node/project-root.js';
import { waitFor } from './helpers/harness.js';

const exec = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./helpers/trace-process.ts', import.meta.url));
const TSX = join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx');
const RUN = 'run/two-writers';
const CHAIN = 'chain-1';
const COUNT = 300;

describe('two trace writers in two processes', () => {
  it('lose no line and repeat none, appending and rewriting, while a third process reads', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-writers-'));
    const stop = join(dir, 'stop');
    let readerOut = '';
    const reader = spawn(TSX, [SCRIPT, 'reader', dir, stop], { stdio: ['ignore', 'pipe', 'inherit'] });
    reader.stdout.on('data', (c: Buffer) => (readerOut += c.toString()));
    const readerDone = new Promise<void>((resolve) => reader.on('exit', () => resolve()));
    const writers = Promise.all(['A', 'B'].map((name) => exec(TSX, [SCRIPT, 'writer', dir, name, String(COUNT)], { cwd: PROJECT_ROOT })));
    await waitFor('both writers ready', () => existsSync(join(dir, 'ready-A')) && existsSync(join(dir, 'ready-B')), 60_000);
    writeFileSync(join(dir, 'go'), '');
    const [a, b] = await writers;
    writeFileSync(stop, '');
    await readerDone;

    const counts = [a, b].map((r) => JSON.parse(r.stdout) as { appended: number; duplicate: number; replaced: number; startedAt: number; endedAt: number });
    // The two really wrote at the same time (they start together at DIR/go).
    const overlapMs = Math.min(counts[0].endedAt, counts[1].endedAt) - Math.max(counts[0].startedAt, counts[1].startedAt);
    console.log(`writers overlapped for ${overlapMs} ms`);
    expect(overlapMs).toBeGreaterThan(0);
    // Every write was either a new line, a repeat dropped, or a replacement of the other writer's line: both really competed.
    for (const c of counts) expect(c.appended + c.duplicate + c.replaced).toBe(COUNT * 4);
    expect(counts[0].replaced + counts[1].replaced).toBeGreaterThan(0);

    const lines = readTrace(dir, RUN, CHAIN);
    // One workflow line per seq (whichever writer's came last), and each writer's progress line under it.
    expect(lines.length).toBe(COUNT * 3);
    expect(new Set(lines.map(lineKey)).size).toBe(lines.length);
    for (let seq = 1; seq <= COUNT; seq++) {
      const at = lines.slice((seq - 1) * 3, seq * 3);
      expect(at.map((l) => [l.seq, l.type])).toEqual([[seq, 'turn'], [seq, 'tool_progress'], [seq, 'tool_progress']]);
      // The progress lines in the order they were written: either writer's first.
      expect(at.slice(1).map((l) => l.attempt).sort()).toEqual([1, 2]);
    }
    // No lock or temporary file left behind.
    expect(readdirSync(dir).filter((f) => !['stop', 'go', 'ready-A', 'ready-B'].includes(f))).toEqual([`${encodeURIComponent(RUN)}.${CHAIN}.jsonl`]);

    const read = JSON.parse(readerOut) as { snapshots: number; lines: number; problems: string[] };
    expect(read.problems).toEqual([]);
    expect(read.snapshots).toBeGreaterThan(10);
    expect(read.lines).toBe(COUNT * 3);
  });
});

describe('a trace lock', () => {
  const now = Date.now();
  it('held by a live process on this host is never stale, however old (a stalled writer keeps its lock)', () => {
    expect(isStale({ pid: process.pid, host: hostname(), mtimeMs: now - 10 * STALE_LOCK_MS })).toBe(false);
  });

  it('held by a process on this host that has exited is stale at once', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid ?? 0;
    await new Promise((resolve) => child.once('exit', resolve));
    expect(isStale({ pid, host: hostname(), mtimeMs: now })).toBe(true);
  });

  it("held on another host is stale only past STALE_LOCK_MS (its process cannot be asked)", () => {
    expect(isStale({ pid: process.pid, host: 'elsewhere', mtimeMs: now - STALE_LOCK_MS - 1000 })).toBe(true);
    expect(isStale({ pid: process.pid, host: 'elsewhere', mtimeMs: now })).toBe(false);
  });
});
