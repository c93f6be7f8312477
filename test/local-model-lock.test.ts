// Two installs of the local model at once share one build: the second waits
// on the first's lock and takes its result (a real process of
// scripts/install-local-model.mjs; the "first install" here is a lock file
// held by a live process, so no 20-minute build runs in the suite).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../node/project-root.js';
import { waitFor } from './helpers/harness.js';
import { isDocumented } from './helpers/documented.js';

// The cache folder's name: the engine's version and the build's CPU flags (scripts/install-local-model.mjs).
const VERSION = '11434.0.0-avx2';

describe('the local model installer', () => {
  it('waits for an install already under way and reuses its llama-server instead of building a second one', { timeout: 60_000 }, async () => {
    const cacheRoot = mkdtempSync(join(tmpdir(), 'llama-cache-'));
    const cache = join(cacheRoot, `llama-server-${VERSION}`);
    const weights = join(cacheRoot, 'weights.gguf');
    writeFileSync(weights, 'not really weights');
    // The first install: a live process holds the lock.
    const holder = spawn('sleep', ['600']);
    writeFileSync(`${cache}.lock`, String(holder.pid));
    try {
      const second = spawn(process.execPath, ['scripts/install-local-model.mjs'], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, LLAMA_CACHE_DIR: cacheRoot, LOCAL_MODEL_PATH: weights, LLAMA_SERVER: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      second.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      second.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = new Promise<number | null>((resolve) => second.once('close', resolve));
      await waitFor('the second install to wait', () => stderr.includes(`[local-model] building llama-server: another install (pid ${holder.pid}) is doing it; waiting for it (lock ${cache}.lock)`));

      // The first install finishes: its result in the cache, its lock gone.
      mkdirSync(cache, { recursive: true });
      writeFileSync(join(cache, 'llama-server'), '#!/bin/sh\n');
      writeFileSync(join(cache, 'chat-template.jinja'), '');
      rmSync(`${cache}.lock`);

      expect(isDocumented(stderr.split('\n')[0])).toBe(true);
      expect(await exited).toBe(0);
      expect(JSON.parse(stdout)).toEqual({ model: weights, server: join(cache, 'llama-server'), template: join(cache, 'chat-template.jinja') });
      expect(stderr).not.toContain('building llama-server (');
      expect(existsSync(`${cache}.lock`)).toBe(false);
    } finally {
      holder.kill();
    }
  });
});
