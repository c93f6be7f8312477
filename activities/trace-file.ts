// The JSONL trace on disk: one file per run under TRACE_DIR, one object per
// line, each with runId, seq and type. Writers of several processes (workers,
// a restarted worker) append to the same file; each line's key (seq, plus the
// step of a progress line) is written at most once, so a replayed or retried
// workflow task never duplicates a line.
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface TraceLine {
  ts: string;
  runId: string;
  seq: number;
  type: string;
  /** Only on tool_progress lines: the step within the tool call they belong to. */
  step?: number;
  /** Only on tool_progress lines: the activity attempt that reported it. */
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

export function traceFile(dir: string, runId: string): string {
  // Child run ids contain "/": keep one flat folder of files.
  return join(dir, `${encodeURIComponent(runId)}.jsonl`);
}

function lineKey(l: { seq: number; step?: number; attempt?: number }): string {
  return l.step === undefined ? String(l.seq) : `${l.seq}.${l.attempt ?? 1}.${l.step}`;
}

export function readTrace(dir: string, runId: string): TraceLine[] {
  const f = traceFile(dir, runId);
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as TraceLine);
}

export class TraceWriter {
  /** runId -> keys already in the file, and the file size they were read at. */
  private readonly known = new Map<string, { keys: Set<string>; size: number }>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  write(runId: string, event: TraceEntry): boolean {
    const file = traceFile(this.dir, runId);
    const keys = this.keysFor(runId, file);
    const key = lineKey(event);
    if (keys.has(key)) return false;
    const line = JSON.stringify({ ts: new Date().toISOString(), runId, ...event }) + '\n';
    appendFileSync(file, line);
    keys.add(key);
    this.known.set(runId, { keys, size: statSync(file).size });
    return true;
  }

  private keysFor(runId: string, file: string): Set<string> {
    const size = existsSync(file) ? statSync(file).size : 0;
    const cached = this.known.get(runId);
    // Another process may have appended since: re-read when the size moved.
    if (cached && cached.size === size) return cached.keys;
    const keys = new Set(readTrace(this.dir, runId).map(lineKey));
    this.known.set(runId, { keys, size });
    return keys;
  }
}
