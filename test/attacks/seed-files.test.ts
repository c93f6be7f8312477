// AgentPlugin's seedFiles (new): names written into every new workspace. A
// name that is a path would write outside the workspace (or into a folder
// the approval rules treat apart), so anything but a plain file name is
// refused when the plugin is made, naming the option and the name; nothing is
// written anywhere.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentPlugin } from '../../worker/index.js';

const base = mkdtempSync(join(tmpdir(), 'seed-attack-'));
const workspace = join(base, 'ws');
const make = (seedFiles: Record<string, string>) => () => new AgentPlugin({ model: { baseUrl: 'http://127.0.0.1:9/v1' }, workspace, seedFiles });

describe('AgentPlugin seedFiles: only plain file names', () => {
  it.each([['../outside.txt'], ['/etc/passwd-copy'], ['a/b.txt'], ['..'], ['.'], ['x\u202etxt.exe'], ['nul\u0000.txt'], ['']])('refuses %j, naming the option and the name', (name) => {
    expect(make({ [name]: 'pwned' })).toThrow(`AgentPlugin option seedFiles names ${JSON.stringify(name)}, which is not a plain file name (letters, digits, . _ -; no folders)`);
    expect(existsSync(join(base, 'outside.txt'))).toBe(false);
    expect(existsSync(workspace) ? readdirSync(workspace) : []).toEqual([]);
  });

  it('a value that is not text is refused naming the file', () => {
    expect(make({ 'a.txt': 3 as unknown as string })).toThrow(/^AgentPlugin option seedFiles\.a\.txt must be a string/);
  });

  it('plain names are taken', () => {
    expect(make({ 'access.log': '', 'notes-2026.txt': 'hi', '.hidden': '' })).not.toThrow();
  });
});
