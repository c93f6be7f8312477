// The project's folder, for whatever every layer finds relative to it
// (scripts, the Temporal CLI, reports, data). Run from sources this file is
// node/project-root.ts; compiled (npm run build) it sits one folder deeper,
// under dist/: both name the folder holding package.json, so a compiled
// worker finds what a source one does.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const compiled = import.meta.url.endsWith('.js');

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), compiled ? '../..' : '..');
