// The trace format (CONTRACT.md) and its readers. The JSONL trace on disk: one file per run chain under TRACE_DIR, one object
// per line, each with runId, seq and type. A workflow id can be used again once
// its run closed, so the file is named by the workflow id *and* the chain's
// first execution run id (which survives continue-as-new): a reused id starts
// a new file and never overwrites the old run's lines. Writers of several processes (workers,
// a restarted worker) append to the same file; each line's key (seq, plus the
// step of a progress line) is written at most once, so a replayed or retried
// workflow task never duplicates a line.
import { closeSync, existsSync, openSync, readSync, readdirSync, readFileSync } from 'node:fs';
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
export function lineKey(l: { seq: number; type: string; step?: number; attempt?: number }): string {
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
