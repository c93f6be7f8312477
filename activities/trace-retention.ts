// Retention of the trace files (TRACE_DIR): one file per run chain, named by
// its workflow id and chain id. A file goes when its workflow is closed and has
// been for longer than the maximum age (by default the namespace's
// retention); past the size limit the least recently written files of closed
// workflows go first. A running workflow's files stay, whatever their age and
// the size.
//
// TRACE_DIR may be shared by the workers of several namespaces: every line
// names its writer's namespace, and a sweep judges only files whose first
// line names its own (another namespace's server would answer "not found" for
// a workflow running there). A file without a namespace (older code) is kept.
// A workflow the server does not know is unknown, not forgotten: its file
// goes only once the namespace's retention has passed since it was last
// written (activities/workflow-state.ts).
import { open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isHashedStem } from '../common/bounds.js';
import { removable, type WorkflowState } from './workflow-state.js';

export interface FileRetention {
  maxAgeMs: number;
  maxBytes: number | null;
}

export interface TraceRetention extends FileRetention {
  /** The sweeper's namespace: only files whose lines name it are judged. */
  namespace: string;
  /** The namespace's retention as its server reports it (null: it did not say; files of workflows it does not know stay). */
  namespaceRetentionMs: number | null;
}

export interface FileSweep {
  removed: number;
  files: number;
  bytes: number;
  keptInFlight: number;
  /** Files looked at that belong to another namespace or to none (older code), kept untouched. */
  keptOthers?: number;
}

const RUN_ID = /^(.*)\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The workflow id a trace file belongs to (node/trace-format.ts traceFile names them). */
export function traceWorkflowId(fileName: string): string | null {
  if (!fileName.endsWith('.jsonl')) return null;
  const base = fileName.slice(0, -'.jsonl'.length);
  const m = RUN_ID.exec(base);
  // A hashed name (a long or non-ASCII id) does not hold the id: read it from the file's first line.
  if (isHashedStem(m ? m[1] : base)) return null;
  try {
    return decodeURIComponent(m ? m[1] : base);
  } catch {
    return null;
  }
}

/** How much of a file's start is read for its first line: lines are small, and a huge one is not a line of ours. */
const HEAD_BYTES = 64 * 1024;

/** The namespace and workflow id the file's first line names (nulls when it names none, or is unreadable). */
export async function traceOwner(path: string): Promise<{ namespace: string | null; workflowId: string | null }> {
  const none = { namespace: null, workflowId: null };
  let text: string;
  try {
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(HEAD_BYTES);
      const { bytesRead } = await fh.read(buf, 0, HEAD_BYTES, 0);
      text = buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    return none;
  }
  const nl = text.indexOf('\n');
  if (nl < 0) return none;
  try {
    const line = JSON.parse(text.slice(0, nl)) as { namespace?: unknown; workflowId?: unknown };
    return {
      namespace: typeof line.namespace === 'string' ? line.namespace : null,
      workflowId: typeof line.workflowId === 'string' ? line.workflowId : null,
    };
  } catch {
    return none;
  }
}

/** Whether a trace file's name is hashed (common/bounds.ts fileStem: a long or non-ASCII id): its workflow id is then only in its lines. */
function hashedTraceName(fileName: string): boolean {
  if (!fileName.endsWith('.jsonl')) return false;
  const base = fileName.slice(0, -'.jsonl'.length);
  return isHashedStem(RUN_ID.exec(base)?.[1] ?? base);
}

export async function sweepTraces(dir: string, stateOf: (workflowId: string) => Promise<WorkflowState>, limits: TraceRetention, now = Date.now()): Promise<FileSweep> {
  const files: { path: string; workflowId: string; mtime: number; size: number }[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    // A hashed name's id is read from the file's first line, as its owner is (traceOwner).
    const workflowId = traceWorkflowId(name) ?? (hashedTraceName(name) ? (await traceOwner(join(dir, name))).workflowId : null);
    if (workflowId === null) continue;
    const s = await stat(join(dir, name)).catch(() => null);
    if (s?.isFile()) files.push({ path: join(dir, name), workflowId, mtime: s.mtimeMs, size: s.size });
  }
  files.sort((a, b) => a.mtime - b.mtime);
  const cutoff = now - limits.maxAgeMs;
  const unknownBefore = limits.namespaceRetentionMs === null ? null : now - limits.namespaceRetentionMs;
  const inFlight = new Set<string>();
  const others = new Set<string>();
  const gone = new Set<string>();
  const drop = async (f: (typeof files)[number], closedBefore: number) => {
    // Whose it is, by its own first line (the name may be shortened): never judged by another namespace's server.
    const owner = await traceOwner(f.path);
    if (owner.namespace !== limits.namespace) {
      others.add(f.path);
      return;
    }
    const s = await stateOf(owner.workflowId ?? f.workflowId);
    if (s.running) inFlight.add(f.path);
    else if (removable(s, { closedBefore, unknownBefore }, f.mtime)) {
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
  return { removed: gone.size, files: files.length - gone.size, bytes, keptInFlight: inFlight.size, keptOthers: others.size };
}
