import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster suite has its own server and setup: npm run test:cluster.
    exclude: [...configDefaults.exclude, 'test/cluster/**'],
    // One real Temporal dev server and one scripted provider for the whole
    // run; each test file brings its own worker on its own task queue.
    globalSetup: ['test/global-setup.ts'],
    // Temporal's native runtime is one per process: keep files in forks.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    // The JSON file lets .ci/run print a plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.data/test-results.json' },
    hookTimeout: 120_000,
  },
});
