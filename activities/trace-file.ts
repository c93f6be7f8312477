// The JSONL trace on disk: one file per run chain under TRACE_DIR, one object
// per line, each with runId, seq and type. A workflow id can be used again once
// its run closed, so the file is named by the workflow id *and* the chain's
// first execution run id (which survives continue-as-new): a reused id starts
// a new file and never overwrites the old run's lines. Writers of several processes (workers,
// a restarted worker) append to the same file; each line's key (seq, plus the
// step of a progress line) is written at most once, so a replayed or retried
// workflow task never duplicates a line.
import { appendFileSync, closeSync, existsSync, openSync, readSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TraceLine {
  ts: string;
  runId: string;
  seq: number;
  type: string;
  /** Only on lines written by activities: the step within the call they belong to. */
  step?: number;
  /** Only on lines written by activities: the activity attempt that wrote it. */
  attempt?: number;
  [field: string]: unknown;
}

/** A line as a writer hands it over; ts and runId are added on write. */
export interface TraceEntry {
  seq: number;
  type: string;
  step?: number;
  attempt?: number;
  [field: string]: unknown;
}

const CHAIN_ID = /^[0-9A-Za-z-]{1,64}$/;

/**
 * The file of one run chain. Without a chain id: the name traces had before
 * chains (still read, so old runs stay readable).
 */
export function traceFile(dir: string, runId: string, chainId?: string): string {
  // Child run ids contain "/": keep one flat folder of files.
  if (chainId === undefined) return join(dir, `${encodeURIComponent(runId)}.jsonl`);
  if (!CHAIN_ID.test(chainId)) throw new Error(`not a run id: ${JSON.stringify(chainId)}`);
  return join(dir, `${encodeURIComponent(runId)}.${chainId}.jsonl`);
}

/** The chain ids that have a trace for this workflow id, oldest first (by their first line). */
export function traceChains(dir: string, runId: string): string[] {
  if (!existsSync(dir)) return [];
  const prefix = `${encodeURIComponent(runId)}.`;
  const chains: { chain: string; first: string }[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.jsonl')) continue;
    const chain = name.slice(prefix.length, -'.jsonl'.length);
    if (!CHAIN_ID.test(chain)) continue;
    chains.push({ chain, first: firstTs(join(dir, name)) });
  }
  return chains.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0)).map((c) => c.chain);
}

function firstTs(file: string): string {
  // The first line only: a long run's trace can be large.
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(4096);
  const n = readSync(fd, buf, 0, buf.length, 0);
  closeSync(fd);
  const text = buf.subarray(0, n).toString('utf8');
  const nl = text.indexOf('\n');
  try {
    return String((JSON.parse(nl < 0 ? text : text.slice(0, nl)) as { ts?: unknown }).ts ?? '');
  } catch {
    return '';
  }
}

/** The file to read for a workflow id: the given chain's, else the latest chain's, else the pre-chain file. */
export function resolveTraceFile(dir: string, runId: string, chainId?: string): string {
  if (chainId !== undefined) return traceFile(dir, runId, chainId);
  const latest = traceChains(dir, runId).at(-1);
  return traceFile(dir, runId, latest);
}

// Workflow events are keyed by seq alone. Lines written by activities (tool
// progress, model attempts) hang under the seq of the last workflow event and
// add their type, attempt and step.
function lineKey(l: { seq: number; type: string; step?: number; attempt?: number }): string {
  return l.step === undefined ? String(l.seq) : `${l.seq}.${l.type}.${l.attempt ?? 1}.${l.step}`;
}

/** A run's trace: the given chain, or the latest run of that workflow id. */
export function readTrace(dir: string, runId: string, chainId?: string): TraceLine[] {
  return readTraceFile(resolveTraceFile(dir, runId, chainId));
}

/**
 * A trace file's lines in seq order: a line filled in on replay lands at the
 * end of the file. Lines written by activities follow the workflow line whose
 * seq they carry, in the order they were written.
 */
export function readTraceFile(f: string): TraceLine[] {
  if (!existsSync(f)) return [];
  const lines = readFileSync(f, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as TraceLine);
  const rank = (l: TraceLine) => l.seq * 2 + (l.step === undefined ? 0 : 1);
  return lines.map((l, i) => ({ l, i })).sort((a, b) => rank(a.l) - rank(b.l) || a.i - b.i).map(({ l }) => l);
}

/** Trace files whose lines the writer keeps in memory (the most recently written); others are read again when written. */
const KNOWN_FILES = 256;

export class TraceWriter {
  /**
   * file -> each key in the file with its content (sans ts), and the file size
   * they were read at. Bounded: a worker that lives for weeks writes the traces
   * of many thousands of runs.
   */
  private readonly known = new Map<string, { lines: Map<string, string>; size: number }>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /**
   * Appends the line unless its key is there already. A retried workflow task
   * re-emits its events: the same content is dropped. A retried task can also
   * differ from the failed attempt (a signal arrived in between, so the server
   * refused the first completion): then the attempt that counts is the later
   * one, and its line replaces the earlier one in place. With `onlyIfMissing`
   * (a replayed event) the line is only ever added, never replaced.
   */
  write(runId: string, chainId: string | undefined, event: TraceEntry, opts: { onlyIfMissing?: boolean } = {}): 'appended' | 'duplicate' | 'replaced' {
    const file = traceFile(this.dir, runId, chainId);
    const key = lineKey(event);
    // A replayed event: its line is almost always known already; skip even the stat.
    if (opts.onlyIfMissing && this.known.get(file)?.lines.has(key)) return 'duplicate';
    const lines = this.linesFor(file);
    if (opts.onlyIfMissing && lines.has(key)) return 'duplicate';
    const content = JSON.stringify({ runId, ...event });
    const full = JSON.stringify({ ts: new Date().toISOString(), runId, ...event });
    const prior = lines.get(key);
    if (prior === content) return 'duplicate';
    if (prior !== undefined) {
      const rewritten = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => (lineKey(JSON.parse(l) as TraceLine) === key ? full : l));
      writeFileSync(file + '.tmp', rewritten.join('\n') + '\n');
      renameSync(file + '.tmp', file);
    } else {
      appendFileSync(file, full + '\n');
    }
    lines.set(key, content);
    this.remember(file, lines, statSync(file).size);
    return prior === undefined ? 'appended' : 'replaced';
  }

  /** Keeps a file's lines as the most recent, and forgets the least recently written past KNOWN_FILES. */
  private remember(file: string, lines: Map<string, string>, size: number): void {
    this.known.delete(file);
    this.known.set(file, { lines, size });
    if (this.known.size > KNOWN_FILES) this.known.delete(this.known.keys().next().value as string);
  }

  /** How many trace files the writer holds in memory (for the test of its bound). */
  get filesInMemory(): number {
    return this.known.size;
  }

  private linesFor(file: string): Map<string, string> {
    const size = existsSync(file) ? statSync(file).size : 0;
    const cached = this.known.get(file);
    // Another process may have written since: re-read when the size moved.
    if (cached && cached.size === size) return cached.lines;
    const lines = new Map(readTraceFile(file).map(({ ts: _ts, ...rest }) => [lineKey(rest as TraceLine), JSON.stringify(rest)] as const));
    this.remember(file, lines, size);
    return lines;
  }
}
