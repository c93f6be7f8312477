// Every path a tool touches stays inside the run's workspace, on real files.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approvalGuard, resolvedApprovalProblem, workspaceFiles, type FilesOptions } from '../../activities/tools/files.js';
import { NothingChanged, ToolError } from '../../activities/tools/tool-error.js';
import { assertReadable, ensureWorkspace, resolveInside, SEED_FILES } from '../../activities/tools/workspace.js';
import { PROJECT_ROOT } from '../../node/project-root.js';

const base = mkdtempSync(join(tmpdir(), 'ws-unit-'));
const root = ensureWorkspace(base, 'w');
writeFileSync(join(base, 'outside.txt'), 'secret');
symlinkSync(join(base, 'outside.txt'), join(root, 'leak.txt'));
mkdirSync(join(base, 'elsewhere'));
symlinkSync(join(base, 'elsewhere'), join(root, 'door'));
symlinkSync(join(root, 'notes.txt'), join(root, 'alias.txt'));

const refused = (rel: string) => {
  try {
    resolveInside(root, rel);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return (err as ToolError).message;
  }
};

describe('ensureWorkspace', () => {
  it('a process killed while seeding leaves no half-seeded workspace: the next one seeds it whole', () => {
    const at = mkdtempSync(join(tmpdir(), 'ws-crash-'));
    // Dies with SIGKILL after the first seed file, as a worker did in the crash matrix.
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/helpers/crash-while-seeding.ts', at, 'w'], { cwd: PROJECT_ROOT });
    expect(child.signal).toBe('SIGKILL');
    expect(existsSync(join(at, 'w'))).toBe(false);
    const dir = ensureWorkspace(at, 'w');
    expect(readdirSync(dir).sort()).toEqual(Object.keys(SEED_FILES).sort());
  });
});

describe('resolveInside', () => {
  it('seeds a new workspace with the three files', () => {
    expect(resolveInside(root, 'errors.log')).toBe(join(root, 'errors.log'));
    expect(resolveInside(root, 'notes.txt')).toBe(join(root, 'notes.txt'));
  });

  it.each([
    ['..', /climbs out/],
    ['../outside.txt', /climbs out/],
    ['a/../../outside.txt', /climbs out/],
    ['/etc/passwd', /absolute/],
    ['..\\outside.txt', /backslashes/],
    ['leak.txt', /symbolic link/],
    ['door/new.txt', /symbolic link/],
    ['errors.log\u0000.txt', /control or look-alike/],
    ['\u202eerrors.log', /control or look-alike/],
    ['\u2024\u2024/outside.txt', /control or look-alike/],
    ['\uff0e\uff0e\uff0foutside.txt', /control or look-alike/],
    ['.', /outside the workspace/],
  ])('refuses %j with an error the model can read', (rel, why) => {
    const msg = refused(rel);
    expect(msg).toMatch(why);
    expect(msg).toContain('Use a path relative to the workspace');
  });

  it('allows a symlink that stays inside', () => {
    expect(refused('alias.txt')).toBeNull();
  });
});

describe('assertReadable', () => {
  it('refuses secrets by name, as a permanent error, even for root', () => {
    for (const rel of ['.env', '.env.production', 'server.key', 'certs/site.pem', 'secrets/db.txt', 'id_rsa']) {
      let err: unknown = null;
      try {
        assertReadable(root, join(root, rel));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ToolError);
      expect((err as ToolError).permanent).toBe(true);
    }
    expect(() => assertReadable(root, join(root, 'errors.log'))).not.toThrow();
  });
});

describe('ctx.files (the sealed workspace, activities/tools/files.ts)', () => {
  const fresh = (opts: FilesOptions = {}) => {
    const at = ensureWorkspace(mkdtempSync(join(tmpdir(), 'ws-files-')), 'w');
    return { at, files: workspaceFiles(at, opts) };
  };
  const reason = async (p: Promise<unknown>) => {
    const err = await p.then(() => null, (e: unknown) => e);
    const e = err instanceof NothingChanged ? err.reason : err;
    expect(e).toBeInstanceOf(ToolError);
    return (e as ToolError).message;
  };

  it('writes with missing folders made one by one, reads back, cuts at maxBytes, and removes', async () => {
    const { at, files } = fresh();
    expect(await files.write('a/b/c.txt', 'hello world', { createFolders: true })).toEqual({ path: join(at, 'a/b/c.txt'), rel: 'a/b/c.txt' });
    expect(await files.read('a/b/c.txt', { maxBytes: 5 })).toMatchObject({ text: 'hello', size: 11, truncated: true });
    await files.write('a/b/c.txt', 'hi');
    expect(readFileSync(join(at, 'a/b/c.txt'), 'utf8')).toBe('hi');
    await files.remove('a/b/c.txt');
    expect(existsSync(join(at, 'a/b/c.txt'))).toBe(false);
  });

  it('refuses a link that points nowhere instead of letting a mkdir or open follow it', async () => {
    const { at, files } = fresh();
    const gone = join(mkdtempSync(join(tmpdir(), 'ws-gone-')), 'not-yet');
    symlinkSync(gone, join(at, 'dangling'));
    expect(await reason(files.write('dangling/x.txt', 'x', { createFolders: true }))).toMatch(/symbolic link that points nowhere/);
    expect(existsSync(gone)).toBe(false);
  });

  it('judges the secret policy where a path resolves, for reads, writes and deletes', async () => {
    const { at, files } = fresh();
    writeFileSync(join(at, '.env'), 'KEY=1');
    symlinkSync('.env', join(at, 'readme.txt'));
    for (const p of [files.read('readme.txt'), files.write('readme.txt', 'x'), files.remove('readme.txt')]) expect(await reason(p)).toMatch(/access denied.*"\.env"/);
    expect(readFileSync(join(at, '.env'), 'utf8')).toBe('KEY=1');
  });

  it('never removes a link nor its target, even inside the workspace', async () => {
    const { at, files } = fresh();
    symlinkSync('notes.txt', join(at, 'alias.txt'));
    expect(await reason(files.remove('alias.txt'))).toMatch(/symbolic link.*only regular files are deleted/);
    expect(existsSync(join(at, 'notes.txt'))).toBe(true);
  });

  it('refuses folders and FIFOs at once, never blocking on one', async () => {
    const { at, files } = fresh();
    mkdirSync(join(at, 'dir'));
    execFileSync('mkfifo', [join(at, 'pipe')]);
    expect(await reason(files.read('dir'))).toMatch(/is a folder, not a regular file/);
    expect(await reason(files.read('pipe'))).toMatch(/FIFO/);
    expect(await reason(files.write('pipe', 'x'))).toMatch(/FIFO/);
  });

  it('a call nobody approved changes only what its rule exempts, judged on the resolved path', async () => {
    const rule = { argument: 'path', unlessInside: ['tmp'] };
    const { at, files } = fresh({ mayChange: approvalGuard(rule, { path: 'tmp/up/x.txt' }) });
    mkdirSync(join(at, 'tmp'));
    symlinkSync('..', join(at, 'tmp', 'up'));
    expect(resolvedApprovalProblem(at, 'write_note', rule, { path: 'tmp/up/x.txt' })).toMatch(/path "tmp\/up\/x\.txt" resolves to "x\.txt" through a symbolic link, which needs a person's approval/);
    expect(resolvedApprovalProblem(at, 'write_note', rule, { path: 'tmp/x.txt' })).toBeNull();
    // Asked (and so approved) on the path as written: no further bound.
    expect(resolvedApprovalProblem(at, 'write_note', rule, { path: 'x.txt' })).toBeNull();
    expect(approvalGuard(rule, { path: 'x.txt' })).toBeUndefined();
    expect(await reason(files.write('tmp/up/x.txt', 'x'))).toMatch(/resolves to "x\.txt", outside tmp\/, which needs a person's approval/);
    expect(existsSync(join(at, 'x.txt'))).toBe(false);
    await files.write('tmp/ok.txt', 'fine');
    expect(readFileSync(join(at, 'tmp/ok.txt'), 'utf8')).toBe('fine');
  });
});
