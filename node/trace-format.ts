// The trace format (README, "The contract") and its readers. The JSONL trace on disk: one file per run chain under TRACE_DIR, one object
// per line, each with runId, seq and type. A workflow id can be used again once
// its run closed, and a reset makes another run of the same id that replays
// the first one's beginning, so the file is named by the workflow id *and*
// the chain id (the first execution's run id, or a reset run's own; it
// survives continue-as-new: see startRun in workflows/start.ts): a reused id or a reset starts a
// new file and never overwrites another run's lines. Writers of several processes (workers,
// a restarted worker) append to the same file under its lock
// (activities/trace-file.ts); each line's key (seq, plus the step of a
// progress line) is written at most once, so a replayed or retried workflow
// task never duplicates a line.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileStem } from '../common/bounds.js';

export interface TraceLine {
  ts: string;
  /** The workflow id (the field's published name: kept for the tools that read it). */
  runId: string;
  /** The workflow id; absent on lines written before it was added. */
  workflowId?: string;
  /** The Temporal namespace of the worker that wrote it; absent on lines written before it was added. */
  namespace?: string;
  seq: number;
  type: string;
  /** Only on lines written by activities: the step within the call they belong to. */
  step?: number;
  /** Only on lines written by activities: the activity attempt that wrote it. */
  attempt?: number;
  [field: string]: unknown;
}

/** A line as a writer hands it over; ts, runId and workflowId are added on write. */
export interface TraceEntry {
  /** The line's sequence number in its run: with `step`, what keeps replays and restarts from writing it twice. */
  seq: number;
  /** The event: `turn`, `tool_start`, `tool_result`, `run_stopped`, … (docs/operations.md, the trace table). */
  type: string;
  /** Only on lines written by activities: the step within the call they belong to (a progress line). */
  step?: number;
  /** Only on lines written by activities: the activity attempt that wrote it. */
  attempt?: number;
  /** The event's own fields. */
  [field: string]: unknown;
}

const CHAIN_ID = /^[0-9A-Za-z-]{1,64}$/;

/**
 * The file of one run chain. Without a chain id: the name traces had before
 * chains (still read, so old runs stay readable).
 */
export function traceFile(dir: string, runId: string, chainId?: string): string {
  // Child run ids contain "/": keep one flat folder of files. A long or
  // non-ASCII id is hashed (common/bounds.ts fileStem): its percent-encoded
  // name would pass the file system's 255 bytes (ENAMETOOLONG).
  if (chainId === undefined) return join(dir, `${fileStem(runId)}.jsonl`);
  if (!CHAIN_ID.test(chainId)) throw new Error(`not a run id: ${JSON.stringify(chainId)}`);
  return join(dir, `${fileStem(runId)}.${chainId}.jsonl`);
}

/**
 * The chain ids that have a trace for this workflow id, in name order. Which
 * is the latest is the server's to say (client/run-history.ts latestChain):
 * the files' own timestamps come from the clocks of whichever hosts wrote them.
 */
export function traceChains(dir: string, runId: string): string[] {
  if (!existsSync(dir)) return [];
  const prefix = `${fileStem(runId)}.`;
  const chains: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.jsonl')) continue;
    const chain = name.slice(prefix.length, -'.jsonl'.length);
    if (CHAIN_ID.test(chain)) chains.push(chain);
  }
  return chains.sort();
}

/**
 * The file to read for a workflow id: the given chain's; without one, the only
 * chain's, else the pre-chain file. Several chains and none named: an error
 * naming them (the caller asks the server which one is current).
 */
export function resolveTraceFile(dir: string, runId: string, chainId?: string): string {
  if (chainId !== undefined) return traceFile(dir, runId, chainId);
  const chains = traceChains(dir, runId);
  if (chains.length > 1) throw new Error(`${runId} has the traces of ${chains.length} runs (chains ${chains.join(', ')}): name one`);
  return traceFile(dir, runId, chains[0]);
}

// Workflow events are keyed by seq alone. Lines written by activities (tool
// progress, model attempts) hang under the seq of the last workflow event and
// add their type, attempt and step.
export function lineKey(l: { seq: number; type: string; step?: number; attempt?: number }): string {
  return l.step === undefined ? String(l.seq) : `${l.seq}.${l.type}.${l.attempt ?? 1}.${l.step}`;
}

/** A run's trace: the given chain, or the workflow id's only one (see resolveTraceFile). */
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
  const text = readFileSync(f, 'utf8');
  // A line still being appended (no newline yet) is not read: it is whole the next time.
  const lines = text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as TraceLine);
  const rank = (l: TraceLine) => l.seq * 2 + (l.step === undefined ? 0 : 1);
  return lines.map((l, i) => ({ l, i })).sort((a, b) => rank(a.l) - rank(b.l) || a.i - b.i).map(({ l }) => l);
}
