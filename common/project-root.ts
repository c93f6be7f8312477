// The project's folder, for whatever every layer finds relative to it
// (scripts, the Temporal CLI, reports, data).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
