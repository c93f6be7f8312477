import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the compose stack's Temporal server, run natively
// (test/cluster/global-setup.ts). The harness's own test files that need only
// a server, a provider and a bundle run here unchanged (worker-versioning).
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts', 'test/worker-versioning.test.ts'],
    globalSetup: ['test/cluster/global-setup.ts'],
    pool: 'forks',
    // A file that crashes the history service or PostgreSQL crashes it under
    // every run on the cluster: one file at a time, so each asserts on its own runs.
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 120_000,
    reporters: ['default', 'json'],
    outputFile: { json: '.data/test-results-cluster.json' },
  },
});
