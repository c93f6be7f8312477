// The trace writer: appends a run chain's lines to its JSONL file (the format
// and the readers are in common/trace-format.ts). Writers of several processes
// append to the same file; each line's key is written at most once, so a
// replayed or retried workflow task never duplicates a line.
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { lineKey, readTraceFile, traceFile, type TraceEntry, type TraceLine } from '../common/trace-format.js';

export type { TraceEntry, TraceLine } from '../common/trace-format.js';

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
  write(workflowId: string, chainId: string | undefined, event: TraceEntry, opts: { onlyIfMissing?: boolean } = {}): 'appended' | 'duplicate' | 'replaced' {
    const file = traceFile(this.dir, workflowId, chainId);
    const key = lineKey(event);
    // A replayed event: its line is almost always known already; skip even the stat.
    if (opts.onlyIfMissing && this.known.get(file)?.lines.has(key)) return 'duplicate';
    const lines = this.linesFor(file);
    if (opts.onlyIfMissing && lines.has(key)) return 'duplicate';
    // runId: the workflow id under the name the trace was published with (CONTRACT.md); workflowId: the same, by its name.
    const content = JSON.stringify({ runId: workflowId, workflowId, ...event });
    const full = JSON.stringify({ ts: new Date().toISOString(), runId: workflowId, workflowId, ...event });
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
