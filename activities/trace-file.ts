// The trace writer: appends a run chain's lines to its JSONL file (the format
// and the readers are in node/trace-format.ts). Writers of several processes
// (a sticky queue that moved, a restart overlapping the old worker) write the
// same file; each line's key is written at most once, so a replayed or retried
// workflow task never duplicates a line. The check and the write happen under
// a lock file of that trace (created with O_EXCL), so two writers can neither
// both append one key nor lose each other's line to a rewrite; a rewrite goes
// through a temporary file of its own and a rename, so a reader sees the file
// before it or after it, never half of it.
// Every line names the worker's namespace, so retention in another namespace
// sharing TRACE_DIR leaves the file alone (activities/trace-retention.ts).
// Traces hold decrypted prompts and tool output: files are created 0600 and
// folders 0700, readable by the worker's user only.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { lineKey, readTraceFile, traceFile, type TraceEntry, type TraceLine } from '../node/trace-format.js';

export type { TraceEntry, TraceLine } from '../node/trace-format.js';

/** Trace files whose lines the writer keeps in memory (the most recently written); others are read again when written. */
const KNOWN_FILES = 256;

/** What write() did with a line: added it, found it there already, or replaced a retried task's earlier version of it. */
export type WriteOutcome = 'appended' | 'duplicate' | 'replaced';

/** One line for writeAll(), with write()'s option. */
export interface TraceWrite {
  event: TraceEntry;
  onlyIfMissing?: boolean;
}

export class TraceWriter {
  /**
   * file -> each key in the file with its content (sans ts), and the file size
   * they were read at. Bounded: a worker that lives for weeks writes the traces
   * of many thousands of runs.
   */
  private readonly known = new Map<string, { lines: Map<string, string>; stamp: string }>();
  /** How long write() waited for other writers' locks, in all (for the bench). */
  lockWaitMs = 0;

  /** `namespace`: the worker's Temporal namespace, written into every line (absent: lines without one, never removed by retention). */
  constructor(
    readonly dir: string,
    readonly namespace?: string,
  ) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  }

  /**
   * Appends the line unless its key is there already. A retried workflow task
   * re-emits its events: the same content is dropped. A retried task can also
   * differ from the failed attempt (a signal arrived in between, so the server
   * refused the first completion): then the attempt that counts is the later
   * one, and its line replaces the earlier one in place. With `onlyIfMissing`
   * (a replayed event) the line is only ever added, never replaced.
   */
  write(workflowId: string, chainId: string | undefined, event: TraceEntry, opts: { onlyIfMissing?: boolean } = {}): WriteOutcome {
    return this.writeAll(workflowId, chainId, [{ event, ...opts }])[0];
  }

  /**
   * Several lines of one trace, in order, each as write() would take it,
   * under one lock and with their appends in one write(2): a workflow task's
   * lines (a turn, its tool's start and result) cost one lock and one append
   * instead of one each, and the task's completion waits for them
   * (worker/sinks.ts).
   */
  writeAll(workflowId: string, chainId: string | undefined, entries: readonly TraceWrite[]): WriteOutcome[] {
    const file = traceFile(this.dir, workflowId, chainId);
    // Replayed events: almost always known already; skip even the lock when
    // every one is. Safe: a line once written is never removed (only replaced).
    const known = this.known.get(file)?.lines;
    if (known && entries.every((e) => e.onlyIfMissing && known.has(lineKey(e.event)))) return entries.map(() => 'duplicate');
    const release = this.lock(file);
    try {
      return this.writeLocked(file, workflowId, entries);
    } finally {
      release();
    }
  }

  private writeLocked(file: string, workflowId: string, entries: readonly TraceWrite[]): WriteOutcome[] {
    const lines = this.linesFor(file);
    // runId: the workflow id under the name the trace was published with (the contract); workflowId: the same, by its name.
    const ns = this.namespace !== undefined ? { namespace: this.namespace } : {};
    let appends = '';
    const flushAppends = () => {
      if (appends === '') return;
      // One write(2) with O_APPEND: a reader sees each line whole or not at all (readers skip an unfinished last line).
      const fd = openSync(file, 'a', PRIVATE_FILE);
      try {
        writeSync(fd, appends);
      } finally {
        closeSync(fd);
      }
      appends = '';
    };
    const outcomes = entries.map(({ event, onlyIfMissing }): WriteOutcome => {
      const key = lineKey(event);
      if (onlyIfMissing && lines.has(key)) return 'duplicate';
      const content = JSON.stringify({ runId: workflowId, workflowId, ...ns, ...event });
      const full = JSON.stringify({ ts: new Date().toISOString(), runId: workflowId, workflowId, ...ns, ...event });
      const prior = lines.get(key);
      if (prior === content) return 'duplicate';
      if (prior !== undefined) {
        // The rewrite reads the file: what this batch appended so far goes first.
        flushAppends();
        const rewritten = readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => (lineKey(JSON.parse(l) as TraceLine) === key ? full : l));
        // A name of this writer's own: no other process's rewrite can clobber it half-written.
        const tmp = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
        writeFileSync(tmp, rewritten.join('\n') + '\n', { mode: PRIVATE_FILE });
        renameSync(tmp, file);
      } else appends += full + '\n';
      lines.set(key, content);
      return prior === undefined ? 'appended' : 'replaced';
    });
    flushAppends();
    this.remember(file, lines, stampOf(file));
    return outcomes;
  }

  /**
   * Takes the trace's lock (`<file>.lock`, O_EXCL), waiting for another
   * writer's. A lock whose holder died (same host, no such process) or that is
   * older than STALE_LOCK_MS (a writer holds it for a millisecond or so) is
   * broken, under a second lock of its own so two writers never both break
   * one and remove the lock the other then took.
   */
  private lock(file: string): () => void {
    const lock = `${file}.lock`;
    const me = `${process.pid} ${HOST} ${Date.now()} ${randomUUID()}`;
    const started = Date.now();
    for (let spins = 0; ; spins++) {
      try {
        const fd = openSync(lock, 'wx', PRIVATE_FILE);
        writeSync(fd, me);
        closeSync(fd);
        if (spins) this.lockWaitMs += Date.now() - started;
        // Released only while it is still ours: a holder stalled past
        // STALE_LOCK_MS on another host may have seen it broken and a new
        // writer take it, and removing that writer's lock would let a third in.
        return () => {
          if (readLock(lock)?.text === me) unlinkSync(lock);
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readLock(lock);
      if (holder && isStale(holder)) breakLock(lock, holder.text);
      else if (Date.now() - started > LOCK_GIVE_UP_MS) throw new Error(`trace lock ${lock} held by ${holder?.text ?? 'another writer'} for over ${LOCK_GIVE_UP_MS} ms`);
      else sleep(spins < 20 ? 0.2 : 2);
    }
  }

  /** Keeps a file's lines as the most recent, and forgets the least recently written past KNOWN_FILES. */
  private remember(file: string, lines: Map<string, string>, stamp: string): void {
    this.known.delete(file);
    this.known.set(file, { lines, stamp });
    if (this.known.size > KNOWN_FILES) this.known.delete(this.known.keys().next().value as string);
  }

  /** How many trace files the writer holds in memory (for the test of its bound). */
  get filesInMemory(): number {
    return this.known.size;
  }

  private linesFor(file: string): Map<string, string> {
    const stamp = stampOf(file);
    const cached = this.known.get(file);
    // Another process may have written since: re-read when the file moved
    // (an append changes its size; a rewrite, its inode, even at the same size).
    if (cached && cached.stamp === stamp) return cached.lines;
    const lines = new Map(readTraceFile(file).map(({ ts: _ts, ...rest }) => [lineKey(rest as TraceLine), JSON.stringify(rest)] as const));
    this.remember(file, lines, stamp);
    return lines;
  }
}

/** Modes of what the worker creates for traces: its user's only (the umask may narrow them further, never widen). */
export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

/** A lock older than this is a dead writer's, wherever it ran: a live one holds it for a read and a write. */
export const STALE_LOCK_MS = 10_000;
const LOCK_GIVE_UP_MS = 60_000;
const HOST = hostname();
const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** write() is synchronous (sinks and activities call it inline): wait without returning to the event loop. */
const sleep = (ms: number) => Atomics.wait(sleeper, 0, 0, ms);

function stampOf(file: string): string {
  if (!existsSync(file)) return 'none';
  const st = statSync(file);
  return `${st.ino}:${st.size}`;
}

function readLock(lock: string): { text: string; pid: number; host: string; mtimeMs: number } | null {
  try {
    const text = readFileSync(lock, 'utf8');
    const [pid, host] = text.split(' ');
    return { text, pid: Number(pid), host: host ?? '', mtimeMs: statSync(lock).mtimeMs };
  } catch {
    return null; // released meanwhile
  }
}

export function isStale(holder: { pid: number; host: string; mtimeMs: number }): boolean {
  // On this host the holder's process says for certain: a live writer keeps
  // its lock however long it holds it (a stalled event loop, a slow disk).
  // Across hosts only age can tell, so a lock older than STALE_LOCK_MS is
  // taken to be a dead writer's.
  const local = holder.host === HOST && Number.isInteger(holder.pid) && holder.pid > 0;
  if (!local) return Date.now() - holder.mtimeMs > STALE_LOCK_MS;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (err) {
    // EPERM: alive, another user's.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Removes the lock only if it is still the stale one looked at, under `<lock>.break` (itself broken when that is stale). */
function breakLock(lock: string, staleText: string): void {
  const breaker = `${lock}.break`;
  let fd: number;
  try {
    fd = openSync(breaker, 'wx', PRIVATE_FILE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    try {
      if (Date.now() - statSync(breaker).mtimeMs > STALE_LOCK_MS) unlinkSync(breaker);
    } catch {
      // Gone meanwhile: its breaker finished.
    }
    return;
  }
  try {
    if (readLock(lock)?.text === staleText) unlinkSync(lock);
  } finally {
    closeSync(fd);
    unlinkSync(breaker);
  }
}
