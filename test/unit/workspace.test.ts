// Every path a tool touches stays inside the run's workspace, on real files.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../activities/tools/tool-error.js';
import { assertReadable, ensureWorkspace, resolveInside, SEED_FILES } from '../../activities/tools/workspace.js';
import { PROJECT_ROOT } from '../../common/project-root.js';

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
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', `import('./activities/tools/workspace.ts').then((m) => m.ensureWorkspace(${JSON.stringify(at)}, 'w'))`], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, AGENT_CRASH_AT: 'workspace:seeding' },
    });
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
