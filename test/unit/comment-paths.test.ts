// Comments that stay true: every repository path a comment names exists (a
// `.js` path may name its `.ts` source), and no comment points at a file
// outside the repository (the contract's home is the README's "The contract").
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../node/project-root.js';

const ROOTS = ['workflows', 'activities', 'worker', 'client', 'common', 'node', 'dev', 'test', 'bench', 'scripts', 'examples'];
// A path-looking word: optional ./ or ../, at least one folder, a file with a known extension.
const PATH = /(?:^|[\s`'"(])((?:\.\.?\/)?(?:[\w.-]+\/)+[\w.-]+\.(?:ts|md|mjs|json|js|yml|yaml))\b/g;

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    if (e === 'node_modules' || e === 'fixtures') continue;
    const p = join(dir, e);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.(ts|mjs)$/.test(e)) out.push(p);
  }
  return out;
}

/** The comment text of a line: after `//`, or a block comment's line. */
function commentOf(line: string): string | null {
  const at = line.indexOf('//');
  if (at >= 0 && !line.slice(0, at).includes('http')) return line.slice(at);
  return /^\s*(\/\*|\*)/.test(line) ? line : null;
}

const files = ROOTS.filter((r) => existsSync(join(PROJECT_ROOT, r))).flatMap((r) => sources(join(PROJECT_ROOT, r)));
const exists = (file: string, p: string) =>
  [resolve(PROJECT_ROOT, p), resolve(dirname(file), p)].some((c) => existsSync(c) || (c.endsWith('.js') && existsSync(c.replace(/\.js$/, '.ts'))));

describe('comments', () => {
  it('name only paths that exist', () => {
    const missing: string[] = [];
    for (const f of files) {
      // A fenced example in a doc comment (```ts … ```) is a team's code, whose paths are the team's.
      let example = false;
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const c = commentOf(line);
          if (!c) return;
          if (/^\s*\*?\s*```/.test(c)) example = !example;
          if (example) return;
          for (const m of c.matchAll(PATH)) {
            const p = m[1];
            // Not paths of the tree: a script's usage examples, placeholders (docs/NAME.md), declarations the build writes.
            if (/^\.\/(x|dir\/index)\./.test(p) || p.startsWith('node_modules/') || /\b[A-Z]{3,}\b/.test(p) || p.endsWith('.d.ts')) continue;
            if (!exists(f, p)) missing.push(`${f.slice(PROJECT_ROOT.length + 1)}:${i + 1}: ${p}`);
          }
        });
    }
    expect(missing).toEqual([]);
  });

  it('point at no file outside the repository (CONTRACT.md lives in the README)', () => {
    const outside = files.filter((f) => !f.endsWith('comment-paths.test.ts') && /CONTRACT\.md/.test(readFileSync(f, 'utf8'))).map((f) => f.slice(PROJECT_ROOT.length + 1));
    expect(outside).toEqual([]);
  });
});
