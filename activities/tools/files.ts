// The sealed workspace: every file a tool reads, writes or deletes goes
// through these helpers (`ctx.files`), built-ins and teams' tools alike.
//
// A path is resolved through its deepest existing ancestor's real path
// (./workspace.ts resolveReal) and judged there: inside the workspace, not a
// secret (written or resolved), and, for a change, inside the folders the
// call's approval rule exempted when the call was not approved. Then the file
// is opened WITHOUT following a link at its last component (O_NOFOLLOW) and
// without blocking (O_NONBLOCK: a FIFO opens at once and is refused, never
// waited on), and checked again on the open descriptor: a regular file
// (fstat), and where it really is (/proc/self/fd on Linux) still inside the
// workspace and still allowed. Whatever a link swapped between resolving and
// opening changed, the descriptor says so and the call is refused.
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, readlinkSync, readSync, realpathSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { needsApproval, normalisePath, type ApprovalRule } from '../../common/tool-spec.js';
import { NothingChanged, ToolError } from './tool-error.js';
import { assertReadable, isWithin, resolveReal, type ResolvedPath } from './workspace.js';

export type { ResolvedPath } from './workspace.js';

/** What `ctx.files.read` returns. */
export interface FileText extends ResolvedPath {
  /** The file's text (UTF-8), cut at `maxBytes`. */
  text: string;
  /** The file's whole size in bytes. */
  size: number;
  /** The text stops at `maxBytes`: the file is larger. */
  truncated: boolean;
}

/**
 * The run's workspace, sealed (`ctx.files`). Every path is relative to the
 * workspace. Refusals are ToolErrors the model can act on; those of `write`
 * and `remove` come wrapped in NothingChanged (nothing was changed, so the
 * write's claim is released), which the harness unwraps like any other.
 */
export interface WorkspaceFiles {
  /** Where `rel` really lands (links resolved through its deepest existing folder), refused when outside the workspace. */
  resolve(rel: string): ResolvedPath;
  /** A regular file's size, checked as `read` would (for a check before acting). */
  stat(rel: string): Promise<ResolvedPath & { size: number }>;
  /** A regular file's text, at most `maxBytes` of it (default 1 MiB). */
  read(rel: string, opts?: { maxBytes?: number }): Promise<FileText>;
  /** Creates or replaces a regular file; `createFolders` makes its missing folders (each checked inside the workspace). */
  write(rel: string, data: string | Uint8Array, opts?: { createFolders?: boolean }): Promise<ResolvedPath>;
  /** Deletes one regular file (never a link's target, never a folder). */
  remove(rel: string): Promise<ResolvedPath>;
}

export interface FilesOptions {
  /**
   * Why a change at this resolved path needs an approval the call did not
   * get, or null (see approvalGuard). Checked on where the file really is,
   * after it is opened.
   */
  mayChange?: (resolvedRel: string) => string | null;
  /** A test seam: called with the resolved path right before it is opened (a test swaps a link there). */
  beforeOpen?: (path: string) => void;
}

/** Default cap of `read`: a tool result is one history payload, and a tool should not load a huge file to return a little of it. */
export const DEFAULT_READ_BYTES = 1024 * 1024;

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL } = constants;
// O_NOFOLLOW and O_NONBLOCK exist on every POSIX system Node runs on; on
// Windows they are absent (0): links there need privileges, FIFOs do not exist.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

export function workspaceFiles(root: string, opts: FilesOptions = {}): WorkspaceFiles {
  const base = realpathSync(root);
  const resolveChecked = (rel: string): ResolvedPath => {
    const target = resolveReal(base, rel);
    // The secret policy reads both: the path as written (".env" is refused
    // before the file system is asked) and where it lands ("readme.txt -> .env").
    assertReadable(base, join(base, normalisePath(rel) ?? rel));
    assertReadable(base, target.path);
    return target;
  };
  const changeAllowed = (rel: string, target: ResolvedPath) => {
    const problem = opts.mayChange?.(target.rel);
    if (problem) throw new ToolError(`path ${JSON.stringify(rel)} ${problem}`);
  };

  /** Opens `target` without following a link or blocking, and checks the descriptor; the caller closes it. */
  const openChecked = (rel: string, target: ResolvedPath, flags: number, change: boolean): { fd: number; st: Stats; at: ResolvedPath; created: boolean } => {
    const pre = lstatOrNull(target.path);
    // Refused before opening, so a device or FIFO is not even opened in the usual case; the descriptor decides.
    if (pre && !pre.isFile()) throw notRegular(rel, pre);
    opts.beforeOpen?.(target.path);
    let fd: number;
    let created = false;
    try {
      if (flags & O_CREAT) {
        try {
          fd = openSync(target.path, flags | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0o644);
          created = true;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          fd = openSync(target.path, (flags & ~O_CREAT) | O_NOFOLLOW | O_NONBLOCK);
        }
      } else fd = openSync(target.path, flags | O_NOFOLLOW | O_NONBLOCK);
    } catch (err) {
      throw openError(rel, err);
    }
    let real: string | null = null;
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw notRegular(rel, st);
      real = descriptorPath(fd, target.path, st);
      if (real === null || !isWithin(base, real)) {
        throw new ToolError(`path ${JSON.stringify(rel)} changed while it was being opened (a folder on its way became a symbolic link out of the workspace); nothing was done.`);
      }
      const at = { path: real, rel: relative(base, real).split(sep).join('/') };
      // Judged again where the file really is: a link swapped in after resolving must not carry the call past a policy.
      assertReadable(base, real);
      if (change) changeAllowed(rel, at);
      return { fd, st, at, created };
    } catch (err) {
      closeSync(fd);
      // A file this call created where it may not be: taken back (it is empty), so nothing is left outside.
      if (created) {
        try {
          unlinkSync(real ?? descriptorlessPath(target.path));
        } catch {
          // Already gone.
        }
      }
      throw err;
    }
  };

  const files: WorkspaceFiles = {
    resolve: (rel) => resolveReal(base, rel),

    async stat(rel) {
      const target = resolveChecked(rel);
      const { fd, st, at } = openChecked(rel, target, O_RDONLY, false);
      closeSync(fd);
      return { ...at, size: st.size };
    },

    async read(rel, { maxBytes = DEFAULT_READ_BYTES } = {}) {
      const target = resolveChecked(rel);
      const { fd, st, at } = openChecked(rel, target, O_RDONLY, false);
      try {
        const buf = Buffer.alloc(Math.min(st.size, maxBytes));
        let n = 0;
        while (n < buf.length) {
          const got = readSync(fd, buf, n, buf.length - n, n);
          if (got === 0) break;
          n += got;
        }
        return { ...at, text: buf.subarray(0, n).toString('utf8'), size: st.size, truncated: st.size > maxBytes };
      } finally {
        closeSync(fd);
      }
    },

    async write(rel, data, { createFolders = false } = {}) {
      try {
        const target = resolveChecked(rel);
        changeAllowed(rel, target);
        if (createFolders) makeFolders(base, rel, target);
        const { fd, at } = openChecked(rel, target, O_WRONLY | O_CREAT, true);
        try {
          // Truncated only once the descriptor was found to be the right file.
          ftruncateSync(fd, 0);
          const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
          let n = 0;
          while (n < bytes.length) n += writeSync(fd, bytes, n, bytes.length - n, n);
        } finally {
          closeSync(fd);
        }
        return at;
      } catch (err) {
        throw err instanceof ToolError ? new NothingChanged(err) : err;
      }
    },

    async remove(rel) {
      let target: ResolvedPath;
      let checked: { fd: number; st: Stats; at: ResolvedPath };
      try {
        target = resolveChecked(rel);
        // The entry named is what goes: a link is neither removed nor followed
        // to its target (a person approving "alias.txt" was not shown the file it names).
        if (lstatOrNull(resolve(base, rel.normalize('NFC')))?.isSymbolicLink()) {
          throw new ToolError(`${rel} is a symbolic link (to ${JSON.stringify(target.rel)}): only regular files are deleted, never a link or, through it, its target.`);
        }
        changeAllowed(rel, target);
        checked = openChecked(rel, target, O_RDONLY, true);
      } catch (err) {
        throw err instanceof ToolError ? new NothingChanged(err) : err;
      }
      const { fd, st, at } = checked;
      try {
        // Node has no unlinkat: the name is unlinked by its real path, so that
        // path is checked once more right before: its folder still resolves
        // to itself (no folder on the way became a link) and the name still
        // is the file the descriptor holds. What remains is the few
        // microseconds between this check and the unlink.
        const now = lstatOrNull(at.path);
        if (realpathOrNull(dirname(at.path)) !== dirname(at.path) || !now?.isFile() || now.ino !== st.ino || now.dev !== st.dev) {
          throw new NothingChanged(new ToolError(`path ${JSON.stringify(rel)} changed while it was being deleted; nothing was deleted.`));
        }
        unlinkSync(at.path);
        return at;
      } finally {
        closeSync(fd);
      }
    },
  };
  return files;
}

/**
 * The approval a call did not get, judged on resolved paths. The workflow
 * evaluates a tool's rule on the arguments as written (it can do no I/O);
 * `needsApproval(rule, args)` is that same pure function on the same data, so
 * false here means the call ran without anyone being asked. Then every change
 * the call makes must land inside the folders its rule exempts (`unlessInside`),
 * wherever links lead: `tmp/up/x` with `tmp/up -> ..` is `x`, which a person
 * would have been asked about. A call that was asked (and so approved) or a
 * rule without folders sets no bound.
 */
export function approvalGuard(rule: ApprovalRule, args: Record<string, unknown>): ((resolvedRel: string) => string | null) | undefined {
  if (needsApproval(rule, args)) return undefined;
  const folders = exemptFolders(rule);
  if (folders.length === 0) return undefined;
  return (resolvedRel) =>
    folders.some((f) => resolvedRel.startsWith(`${f}/`))
      ? null
      : `resolves to ${JSON.stringify(resolvedRel)}, outside ${folders.map((f) => `${f}/`).join(', ')}, which needs a person's approval this call did not get (a symbolic link leads there). Call the tool with the path ${JSON.stringify(resolvedRel)} itself so a person is asked.`;
}

/**
 * Before the tool runs: the call's path arguments resolved, and the rule asked
 * again. A call the workflow let through unasked, whose rule on the resolved
 * paths would ask, is refused with the reason (nothing runs, nothing is
 * claimed). The open-time check (approvalGuard through ctx.files) still
 * stands behind it for a link swapped after this.
 */
export function resolvedApprovalProblem(root: string, toolName: string, rule: ApprovalRule, args: Record<string, unknown>): string | null {
  if (needsApproval(rule, args)) return null;
  const resolved: Record<string, unknown> = { ...args };
  const changed: string[] = [];
  for (const argument of pathArguments(rule)) {
    const given = args[argument];
    if (typeof given !== 'string') continue;
    try {
      const { rel } = resolveReal(root, given);
      if (rel !== normalisePath(given)) {
        resolved[argument] = rel;
        changed.push(`${argument} ${JSON.stringify(given)} resolves to ${JSON.stringify(rel)}`);
      }
    } catch {
      // A path that does not resolve is the tool's to refuse, with its own words.
    }
  }
  if (changed.length === 0 || !needsApproval(rule, resolved)) return null;
  return `${toolName} refused: ${changed.join('; ')} through a symbolic link, which needs a person's approval this call did not get. Nothing was done; call it with the resolved path so a person is asked.`;
}

function exemptFolders(rule: ApprovalRule): string[] {
  if (typeof rule === 'boolean') return [];
  if ('anyOf' in rule) return rule.anyOf.flatMap(exemptFolders);
  if ('unlessInside' in rule) return rule.unlessInside.map(normalisePath).filter((f): f is string => f !== null && f !== '');
  return [];
}

function pathArguments(rule: ApprovalRule): string[] {
  if (typeof rule === 'boolean') return [];
  if ('anyOf' in rule) return rule.anyOf.flatMap(pathArguments);
  return 'unlessInside' in rule ? [rule.argument] : [];
}

/** Makes the missing folders of a resolved path one by one, each a real folder inside the workspace. */
function makeFolders(base: string, rel: string, target: ResolvedPath): void {
  let at = base;
  for (const part of target.rel.split('/').slice(0, -1)) {
    at = join(at, part);
    try {
      mkdirSync(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // mkdir never follows a link at its last component; a folder that already
    // existed is checked: a link there now (swapped since resolving) is refused.
    const st = lstatOrNull(at);
    if (!st?.isDirectory() || realpathOrNull(at) !== at) {
      throw new ToolError(`path ${JSON.stringify(rel)} changed while its folders were being made (${JSON.stringify(relative(base, at))} is not a folder of the workspace); nothing was written.`);
    }
  }
}

/**
 * Where an open descriptor's file really is: /proc/self/fd on Linux; else the
 * real path of the folder it was opened in, when that folder's entry is still
 * the same file (device and inode). null when the file was unlinked meanwhile
 * or cannot be placed.
 */
function descriptorPath(fd: number, opened: string, st: Stats): string | null {
  try {
    const p = readlinkSync(`/proc/self/fd/${fd}`);
    return p.endsWith(' (deleted)') ? null : p;
  } catch {
    const dir = realpathOrNull(dirname(opened));
    if (dir === null) return null;
    const p = join(dir, basename(opened));
    const now = lstatOrNull(p);
    return now && now.ino === st.ino && now.dev === st.dev ? p : null;
  }
}

/** A created file's path when its descriptor could not be placed: the folder's real path, if any. */
function descriptorlessPath(opened: string): string {
  return join(realpathOrNull(dirname(opened)) ?? dirname(opened), basename(opened));
}

function notRegular(rel: string, st: Stats): ToolError {
  const what = st.isSymbolicLink()
    ? 'became a symbolic link while it was being opened'
    : st.isDirectory()
      ? 'is a folder'
      : st.isFIFO()
        ? 'is a FIFO (named pipe)'
        : st.isSocket()
          ? 'is a socket'
          : 'is a device';
  return new ToolError(`${rel} ${what}, not a regular file: tools only read and write regular files. Call list_files to see what exists.`);
}

function openError(rel: string, err: unknown): unknown {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return new ToolError(`no such file: ${rel}. Call list_files to see what exists.`);
    case 'ELOOP':
      return new ToolError(`${rel} became a symbolic link while it was being opened; tools do not follow links out of place. Nothing was done.`);
    case 'ENXIO':
    case 'EISDIR':
    case 'ENOTDIR':
      return new ToolError(`${rel} is not a regular file: tools only read and write regular files. Call list_files to see what exists.`);
    default:
      return err;
  }
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

function realpathOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}
