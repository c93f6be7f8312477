// The file of a module of this package that something other than `import`
// loads (the SDK's workflow bundler, a child process): the `.ts` source when
// this code runs from sources (tsx, vitest), the compiled `.js` when it runs
// from dist/ under plain node. Deciding by the caller's own extension needs
// no file lookup and cannot pick a stale build beside the sources.
import { fileURLToPath } from 'node:url';

/**
 * `relative` is written with `.js`, as imports are (`'../workflows/index.js'`);
 * `from` is the caller's `import.meta.url`.
 */
export function modulePath(relative: string, from: string): string {
  if (!relative.endsWith('.js')) throw new Error(`modulePath: ${relative} must name a .js file (as relative imports do)`);
  const fromSources = from.endsWith('.ts');
  return fileURLToPath(new URL(fromSources ? `${relative.slice(0, -'.js'.length)}.ts` : relative, from));
}
