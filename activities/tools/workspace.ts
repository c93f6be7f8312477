// Confines every path a tool touches to the run's workspace folder, and seeds
// a new workspace with the files its worker was given (none for a team's
// worker; the demo stack and the tests give SEED_FILES, the three demo files
// the scripted scenarios read).
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

import { ToolError } from './tool-error.js';

// Beside the checks, for tool modules that take a path (examples/tools/notes.ts).
export { PATH_ARG } from './parameters.js';

export const SEED_FILES: Record<string, string> = {
  'errors.log': [
    '2026-09-06T08:12:03Z INFO  scheduler started 12 workers',
    '2026-09-06T08:14:41Z WARN  worker 3 slow heartbeat (2100 ms)',
    '2026-09-06T08:15:02Z ERROR worker 7 timed out after 30000 ms while fetching batch 118',
    '2026-09-06T08:15:02Z INFO  batch 118 requeued',
    '2026-09-06T08:16:30Z INFO  batch 118 done on worker 2',
    '',
  ].join('\n'),
  'access.log': [
    '127.0.0.1 - - [06/Sep/2026:08:12:09 +0000] "GET /health HTTP/1.1" 200 2',
    '127.0.0.1 - - [06/Sep/2026:08:13:44 +0000] "POST /jobs HTTP/1.1" 202 31',
    '',
  ].join('\n'),
  'notes.txt': 'Remember to rotate your logs.\n',
};

/** A workspace that starts empty: what a worker seeds unless it was given files (AgentPlugin's `seedFiles`). */
export const NO_SEED_FILES: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Creates the workspace with `seed` (default: the demo files, for the tests
 * and benchmarks that call this directly; a worker passes its own, none by
 * default) the first time a run uses it.
 * Seeded aside and renamed into place: a worker killed halfway (the crash
 * matrix did it) must not leave a workspace that exists but lacks files, which
 * every later attempt would then take as seeded.
 */
export function ensureWorkspace(root: string, name: string, seed: Readonly<Record<string, string>> = SEED_FILES): string {
  const dir = join(root, name);
  if (!existsSync(dir)) {
    mkdirSync(root, { recursive: true });
    const aside = join(root, `.seeding-${name}-${randomUUID()}`);
    mkdirSync(aside);
    for (const [file, text] of Object.entries(seed)) {
      writeFileSync(join(aside, file), text);
    }
    try {
      renameSync(aside, dir);
    } catch (err) {
      // Another process seeded it first: theirs stands.
      rmSync(aside, { recursive: true, force: true });
      if (!existsSync(dir)) throw err;
    }
  }
  return realpathSync(dir);
}

// Characters that make a path look like something it is not: control
// characters, bidirectional overrides, zero-width marks, fullwidth or
// look-alike slashes and dots.
const DECEPTIVE = /[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u2215\u2044\uff0f\uff3c\u2024\ufe52\uff0e]/u;

const HINT = 'Use a path relative to the workspace, like "errors.log" (call list_files to see what exists).';

/** Where a workspace path really lands: its absolute real path, and that path relative to the workspace ('/'-separated). */
export interface ResolvedPath {
  /** The absolute real path (every link on the way resolved). */
  path: string;
  /** The same, relative to the workspace, with '/' separators: what approval rules and the secret policy judge. */
  rel: string;
}

/**
 * Where `rel` really lands inside `root`, or a ToolError the model can act on.
 * The path is resolved through the real path of its deepest existing ancestor
 * (every symbolic link on the way followed, the missing rest appended), so a
 * missing folder under a link (`tmp/ext/newdir/x` with `tmp/ext -> /outside`)
 * is judged where it would be created, not skipped. A link that points
 * nowhere is refused: a later mkdir or open would follow it to wherever it
 * names. Resolving is not opening: the helpers of ./files.ts open what this
 * returns without following links and check the open descriptor again.
 */
export function resolveReal(root: string, rel: string): ResolvedPath {
  const say = (why: string) => new ToolError(`path ${JSON.stringify(rel)} ${why}. ${HINT}`);
  if (typeof rel !== 'string' || rel === '') throw say('is empty');
  if (DECEPTIVE.test(rel)) throw say('contains control or look-alike characters');
  if (rel.includes('\\')) throw say('uses backslashes');
  if (isAbsolute(rel)) throw say('is absolute; only workspace paths are allowed');
  if (rel.split('/').includes('..')) throw say('climbs out with ".."');
  const base = realpathSync(root);
  const full = resolve(base, rel.normalize('NFC'));
  if (!isWithin(base, full)) throw say('is outside the workspace');
  const missing: string[] = [];
  let at = full;
  let real: string;
  for (;;) {
    try {
      real = realpathSync(at);
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') throw say('goes through something that is not a folder');
      if (code === 'ELOOP') throw say('goes through a loop of symbolic links');
      if (code !== 'ENOENT') throw err;
      if (isLink(at)) throw say(`goes through a symbolic link that points nowhere (${JSON.stringify(relative(base, at))})`);
      missing.unshift(basename(at));
      // The workspace itself exists (realpathSync(root) above), so this ends there at the latest.
      at = dirname(at);
    }
  }
  const landed = join(real, ...missing);
  if (!isWithin(base, landed)) throw say('leads outside the workspace through a symbolic link');
  return { path: landed, rel: relative(base, landed).split(sep).join('/') };
}

/** The real absolute path for `rel` inside `root` (resolveReal's), or a ToolError the model can act on. */
export function resolveInside(root: string, rel: string): string {
  return resolveReal(root, rel).path;
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Is `p` strictly inside `root` (both absolute)? */
export function isWithin(root: string, p: string): boolean {
  const r = relative(root, p);
  return r !== '' && !r.startsWith('..' + sep) && r !== '..' && !isAbsolute(r);
}

// The workspace's access policy. The tests run as root, whom file modes do not
// stop, so secrets are refused by name, before the file system is asked.
const SECRET = [/^\.env(\..*)?$/, /\.pem$/, /\.key$/, /^id_(rsa|ed25519|ecdsa)/, /^\.git$/, /^secrets?$/];

/**
 * Refuses a secret file (`.env`, keys, `.git`, `secrets/`) by name, as a
 * permanent ToolError. The helpers of ./files.ts call it on the path as
 * written and on where it resolves: `readme.txt -> .env` is `.env`.
 */
export function assertReadable(root: string, full: string): void {
  const parts = relative(root, full).split(sep);
  if (parts.some((p) => SECRET.some((re) => re.test(p)))) {
    throw new ToolError(
      `access denied: the workspace policy never lets tools read ${JSON.stringify(parts.join('/'))} (secret files are off limits). Asking again will not change this.`,
      true,
    );
  }
}
