// Measurements that need the suite's real stack (a dev server, the scripted
// provider, the workflow bundle: test/global-setup.ts) but are benches, not
// tests: they park thousands of runs and print figures. `npm run bench:ops`.
// The suite's settings, with its own files only (mergeConfig would add to
// the suite's include, not replace it).
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: {
    ...base.test,
    include: ['bench/**/*.measure.ts'],
    reporters: ['default'],
    outputFile: undefined,
    testTimeout: 3_600_000,
  },
});
