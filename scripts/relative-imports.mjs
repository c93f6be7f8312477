// Writes every relative import of the TypeScript sources with the extension
// Node needs at run time (`./x.js` for `./x.ts`, `./dir/index.js` for a
// folder), so the compiled package runs under plain `node` (ESM resolves no
// bare paths) while tsx, vitest and the SDK's workflow bundler (which maps
// `.js` back to `.ts`) keep reading the sources. Idempotent; `--check` only
// reports, for CI and the lint step.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const skip = new Set(['node_modules', '.git', 'dist', '.temporal', 'reports', 'peer', 'consumer']);
const check = process.argv.includes('--check');
const pattern = /((?:from|import)\s*\(?\s*)(['"])(\.\.?\/[^'"\n]*)\2/g;

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    if (skip.has(name) || name.startsWith('wt-')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sources(p);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}

function withExtension(file, spec) {
  if (/\.(js|mjs|cjs|json|ts|mts)$/.test(spec)) return spec;
  const target = resolve(dirname(file), spec);
  if (existsSync(`${target}.ts`)) return `${spec}.js`;
  if (existsSync(`${target}.mts`)) return `${spec}.mjs`;
  if (existsSync(join(target, 'index.ts'))) return `${spec.replace(/\/$/, '')}/index.js`;
  return spec;
}

let changed = 0;
const missing = [];
for (const file of sources(root)) {
  const text = readFileSync(file, 'utf8');
  const next = text.replace(pattern, (all, lead, q, spec) => {
    const fixed = withExtension(file, spec);
    if (fixed === spec && !/\.(js|mjs|cjs|json|ts|mts)$/.test(spec)) missing.push(`${file}: ${spec}`);
    return `${lead}${q}${fixed}${q}`;
  });
  if (next !== text) {
    changed += 1;
    if (!check) writeFileSync(file, next);
  }
}
if (missing.length) console.error(`relative imports that name no source file:\n  ${missing.join('\n  ')}`);
if (check && changed) {
  console.error(`${changed} files import relative paths without the extension Node needs (run: node scripts/relative-imports.mjs)`);
  process.exit(1);
}
console.log(check ? 'relative imports: all carry their extension' : `relative imports: ${changed} files rewritten`);
