// docs/troubleshooting.md: each failure shows its line and names the test
// that asserts it; that test checks the printed line against the manual
// (test/helpers/documented.ts), so a reworded message fails until the manual follows.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../node/project-root.js';
import { isDocumented, TROUBLESHOOTING } from '../helpers/documented.js';

const sections = readFileSync(TROUBLESHOOTING, 'utf8').split(/^### /m).slice(1);

describe('the troubleshooting manual', () => {
  it.each(sections.map((s) => [s.split('\n')[0], s]))('%s: shows its message and names a test that checks it against the manual', (_title, section) => {
    expect(section).toMatch(/```text\n[\s\S]+?\n```/);
    const tested = /Tested in `([^`]+)`/.exec(section)?.[1];
    expect(tested).toBeDefined();
    const file = join(PROJECT_ROOT, tested!);
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('isDocumented(');
  });

  it('a placeholder stands for what varies, and nothing else matches', () => {
    expect(isDocumented('npm start: port 18787 (the scripted provider) is busy: free it, or set PORT to another port')).toBe(true);
    expect(isDocumented('npm start: port 18787 (the scripted provider) is busy')).toBe(false);
  });
});
