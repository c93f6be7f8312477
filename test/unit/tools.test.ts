// The tools on real files: a delete says what it did (the effect protocol that
// keeps a retried delete from acting twice is test/effects.test.ts), and large
// files are cut with a note the model can read.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plainToolContext } from '../../activities/tools/context.js';
import { deleteFile } from '../../activities/tools/delete-file.js';
import { NothingChanged, ToolError } from '../../activities/tools/tool-error.js';
import { listFiles } from '../../activities/tools/list-files.js';
import { READ_LIMIT_BYTES, readFile } from '../../activities/tools/read-file.js';

function context(key = 'run-1/m3/c2') {
  return plainToolContext(mkdtempSync(join(tmpdir(), 'tools-unit-')), key);
}

describe('delete_file', () => {
  it('deletes the file and says so', async () => {
    const ctx = context();
    expect(await deleteFile(ctx, { path: 'access.log' })).toBe('deleted access.log');
    expect(existsSync(join(ctx.root, 'access.log'))).toBe(false);
  });

  it('a missing file is an error the model can act on, marked as changing nothing (its claim is released)', async () => {
    const ctx = context();
    await deleteFile(ctx, { path: 'access.log' });
    const err = await deleteFile(ctx, { path: 'access.log' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NothingChanged);
    expect((err as NothingChanged).reason).toBeInstanceOf(ToolError);
    expect((err as NothingChanged).message).toBe('no such file: access.log. Call list_files to see what exists.');
  });
});

describe('read_file and list_files', () => {
  it('lists the seeded files with sizes and hides dotfiles', async () => {
    const ctx = context();
    writeFileSync(join(ctx.root, '.env'), 'KEY=1');
    const listing = await listFiles(ctx, {});
    expect(listing.split('\n').map((l) => l.split(' ')[0])).toEqual(['access.log', 'errors.log', 'notes.txt']);
    expect(listing).toMatch(/errors\.log \(\d+ bytes\)/);
  });

  it('cuts a large file with a note', async () => {
    const ctx = context();
    writeFileSync(join(ctx.root, 'big.log'), 'x'.repeat(READ_LIMIT_BYTES + 10));
    const text = await readFile(ctx, { path: 'big.log' });
    expect(text).toContain(`[truncated: big.log is ${READ_LIMIT_BYTES + 10} bytes; only the first ${READ_LIMIT_BYTES} are shown]`);
    expect(await readFile(ctx, { path: 'notes.txt' })).toBe('Remember to rotate your logs.\n');
  });
});
