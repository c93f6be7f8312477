// Retention of the trace files (TRACE_DIR): one file per run chain, named by
// its workflow id and chain id. A file goes when its workflow is closed and has
// been for longer than the maximum age (by default the namespace's
// retention), or when the server no longer knows the workflow; past the size
// limit the least recently written files of closed workflows go first. A
// running workflow's files stay, whatever their age and the size.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { removable, type WorkflowState } from './workflow-state.js';

export interface FileRetention {
  maxAgeMs: number;
  maxBytes: number | null;
}

export interface FileSweep {
  removed: number;
  files: number;
  bytes: number;
  keptInFlight: number;
}

const RUN_ID = /^(.*)\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The workflow id a trace file belongs to (common/trace-format.ts traceFile names them). */
export function traceWorkflowId(fileName: string): string | null {
  if (!fileName.endsWith('.jsonl')) return null;
  const base = fileName.slice(0, -'.jsonl'.length);
  const m = RUN_ID.exec(base);
  try {
    return decodeURIComponent(m ? m[1] : base);
  } catch {
    return null;
  }
}

export async function sweepTraces(dir: string, stateOf: (workflowId: string) => Promise<WorkflowState>, limits: FileRetention, now = Date.now()): Promise<FileSweep> {
  const files: { path: string; workflowId: string; mtime: number; size: number }[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const workflowId = traceWorkflowId(name);
    if (workflowId === null) continue;
    const s = await stat(join(dir, name)).catch(() => null);
    if (s?.isFile()) files.push({ path: join(dir, name), workflowId, mtime: s.mtimeMs, size: s.size });
  }
  files.sort((a, b) => a.mtime - b.mtime);
  const cutoff = now - limits.maxAgeMs;
  const inFlight = new Set<string>();
  const gone = new Set<string>();
  const drop = async (f: (typeof files)[number], closedBefore: number) => {
    const s = await stateOf(f.workflowId);
    if (s.running) inFlight.add(f.path);
    else if (removable(s, closedBefore)) {
      await rm(f.path, { force: true });
      gone.add(f.path);
    }
  };
  // A file is never written after its run closed, so only files untouched for maxAge are asked about.
  for (const f of files) if (f.mtime < cutoff) await drop(f, cutoff);
  let bytes = files.filter((f) => !gone.has(f.path)).reduce((n, f) => n + f.size, 0);
  for (const f of files) {
    if (limits.maxBytes === null || bytes <= limits.maxBytes) break;
    if (gone.has(f.path)) continue;
    await drop(f, Number.POSITIVE_INFINITY);
    if (gone.has(f.path)) bytes -= f.size;
  }
  return { removed: gone.size, files: files.length - gone.size, bytes, keptInFlight: inFlight.size };
}
