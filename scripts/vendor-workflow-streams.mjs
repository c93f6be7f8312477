// Part of `npm run build`: @temporalio/workflow-streams (MIT, Temporal
// Technologies) ships inside the package, under dist/vendor/, instead of as a
// dependency. Why: its only releases (1.23.0 the newest) depend on EXACT
// @temporalio/* versions, so a team on any other SDK version gets a second SDK
// copy in node_modules and in its workflow bundle (npm nests the pinned one;
// this repository's `overrides` never reach a consumer). Its compiled lib,
// copied as is with its LICENSE, resolves `@temporalio/*` from the team's
// project like the rest of dist: one SDK copy, the team's (the peer range).
// Nothing is copied into git: the source of the copy is the exact version
// devDependencies install here, which the suite runs against.
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const NAME = '@temporalio/workflow-streams';
const source = dirname(createRequire(join(root, 'package.json')).resolve(`${NAME}/package.json`));
const manifest = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'));
const target = join(dist, 'vendor', 'workflow-streams');

mkdirSync(target, { recursive: true });
for (const f of readdirSync(join(source, 'lib'))) {
  if (f.endsWith('.js') || f.endsWith('.d.ts')) cpSync(join(source, 'lib', f), join(target, f));
}
cpSync(join(source, 'LICENSE'), join(target, 'LICENSE'));
// Its lib is CommonJS: this folder says so, inside a "type": "module" package.
writeFileSync(
  join(target, 'package.json'),
  JSON.stringify({ name: `${NAME}-vendored`, version: manifest.version, license: manifest.license, private: true, type: 'commonjs', description: `${NAME} ${manifest.version}, vendored by temporal-agent-harness (scripts/vendor-workflow-streams.mjs)` }, null, 2) + '\n',
);

// Every compiled module that imports the package now imports the copy, by a relative path.
const SPEC = new RegExp(`(['"])${NAME.replace('/', '\\/')}\\/(workflow|client)\\1`, 'g');
let rewritten = 0;
const walk = (d) => {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (p === target) continue;
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.js') || p.endsWith('.d.ts')) {
      const text = readFileSync(p, 'utf8');
      if (!SPEC.test(text)) continue;
      SPEC.lastIndex = 0;
      let rel = relative(dirname(p), target).split(sep).join('/');
      if (!rel.startsWith('.')) rel = `./${rel}`;
      writeFileSync(p, text.replace(SPEC, (_m, q, entry) => `${q}${rel}/${entry}.js${q}`));
      rewritten++;
    }
  }
};
walk(dist);
console.log(`vendored ${NAME} ${manifest.version} into dist/vendor/workflow-streams; ${rewritten} compiled modules point at it`);
