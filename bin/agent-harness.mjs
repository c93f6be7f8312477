#!/usr/bin/env node
// The `agent-harness` CLI. In a checkout of this repository (the TypeScript
// sources beside this file) it runs them through tsx, a devDependency, so
// there is no build step while developing. Installed from the package (no
// sources, the compiled dist/) it runs under plain node.
import { existsSync } from 'node:fs';

const sources = new URL('../client/cli-main.ts', import.meta.url);
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  await import('../dist/client/cli-main.js');
}
