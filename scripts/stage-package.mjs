// The package as published: `node scripts/stage-package.mjs <dir>` copies
// what package.json's `files` names (after `npm run build`) into <dir> with a
// package.json holding only what a consumer's npm and node read: no scripts
// (the root's `prepare` installs this repository's Temporal CLI and would
// show as an install script in every consumer's install), no
// devDependencies, no `overrides` (root-only: they never reach a consumer),
// no allowScripts. `npm run package` packs the staged folder; publishing is
// `npm publish .pack` after it. `--refuse-root` (the root's prepack and
// prepublishOnly) stops a pack or publish of the repository's own folder,
// whose package.json is the developer's, with the command to use.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

if (process.argv[2] === '--refuse-root') {
  console.error(`${manifest.name}: the repository's package.json is the developer's (scripts, devDependencies, overrides); pack the staged package instead: npm run package (publish: npm run package && npm publish .pack)`);
  process.exit(1);
}

/** The fields a consumer's npm, node and TypeScript read, and npm's page shows. */
const PUBLISHED = [
  'name', 'version', 'description', 'keywords', 'type', 'license', 'author', 'repository', 'homepage', 'bugs',
  'engines', 'exports', 'main', 'types', 'files', 'bin', 'dependencies', 'peerDependencies', 'peerDependenciesMeta',
];

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/stage-package.mjs <dir> (after npm run build)');
  process.exit(2);
}
const dir = resolve(root, out);
if (!existsSync(join(root, 'dist'))) {
  console.error('dist/ is missing: npm run build first');
  process.exit(1);
}
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
for (const f of manifest.files) cpSync(join(root, f), join(dir, f), { recursive: true });
const published = Object.fromEntries(PUBLISHED.filter((k) => k in manifest).map((k) => [k, manifest[k]]));
writeFileSync(join(dir, 'package.json'), JSON.stringify(published, null, 2) + '\n');
console.log(dir);
