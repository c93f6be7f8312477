// The JSONL trace on disk: one file per run under TRACE_DIR, one object per
// line, each with runId, seq and type. Writers of several processes (workers,
// a restarted worker) append to the same file; each line's key (seq, plus the
// step of a progress line) is written at most once, so a replayed or retried
// workflow task never duplicates a line.
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
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

export function traceFile(dir: string, runId: string): string {
  // Child run ids contain "/": keep one flat folder of files.
  return join(dir, `${encodeURIComponent(runId)}.jsonl`);
}

// Workflow events are keyed by seq alone. Lines written by activities (tool
// progress, model attempts) hang under the seq of the last workflow event and
// add their type, attempt and step.
function lineKey(l: { seq: number; type: string; step?: number; attempt?: number }): string {
  return l.step === undefined ? String(l.seq) : `${l.seq}.${l.type}.${l.attempt ?? 1}.${l.step}`;
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
  /** runId -> each key in the file with its content (sans ts), and the file size they were read at. */
  private readonly known = new Map<string, { lines: Map<string, string>; size: number }>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /**
   * Appends the line unless its key is there already. A retried workflow task
   * re-emits its events: the same content is dropped. A retried task can also
   * differ from the failed attempt (a signal arrived in between, so the server
   * refused the first completion): then the attempt that counts is the later
   * one, and its line replaces the earlier one in place.
   */
  write(runId: string, event: TraceEntry): 'appended' | 'duplicate' | 'replaced' {
    const file = traceFile(this.dir, runId);
    const lines = this.linesFor(runId, file);
    const key = lineKey(event);
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
    this.known.set(runId, { lines, size: statSync(file).size });
    return prior === undefined ? 'appended' : 'replaced';
  }

  private linesFor(runId: string, file: string): Map<string, string> {
    const size = existsSync(file) ? statSync(file).size : 0;
    const cached = this.known.get(runId);
    // Another process may have written since: re-read when the size moved.
    if (cached && cached.size === size) return cached.lines;
    const lines = new Map(readTrace(this.dir, runId).map(({ ts: _ts, ...rest }) => [lineKey(rest as TraceLine), JSON.stringify(rest)] as const));
    this.known.set(runId, { lines, size });
    return lines;
  }
}
