// Retention of the message store (MESSAGE_STORE_DIR): a cache of prompt
// messages by content address, shared by every run, so no file belongs to one
// run. A file goes when it has not been used for the maximum age (the store
// touches a file when it files or reads it, at most every TOUCH_EVERY_MS: a
// run that is working keeps its messages fresh), and past the size limit the
// least recently used go first. A run that later needs a removed message sends
// it inline (MessageStoreMiss): nothing is lost, the prompt travels whole once.
// One pass sweeps one folder: the worker sweeps its own namespace's
// (message-store.ts namespaceFolder), never another namespace's, and the
// store's root, where older code filed messages for every namespace: no
// worker of this version reads those, so they only age out.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileRetention, FileSweep } from './trace-retention.js';

const SHARD = /^[A-Za-z0-9_-]{2}$/;

export async function sweepMessages(dir: string, limits: FileRetention, now = Date.now()): Promise<FileSweep> {
  const files: { path: string; mtime: number; size: number }[] = [];
  for (const shard of await readdir(dir).catch(() => [] as string[])) {
    if (!SHARD.test(shard)) continue;
    for (const name of await readdir(join(dir, shard)).catch(() => [] as string[])) {
      if (!name.endsWith('.json')) continue;
      const s = await stat(join(dir, shard, name)).catch(() => null);
      if (s?.isFile()) files.push({ path: join(dir, shard, name), mtime: s.mtimeMs, size: s.size });
    }
  }
  files.sort((a, b) => a.mtime - b.mtime);
  const cutoff = now - limits.maxAgeMs;
  let bytes = files.reduce((n, f) => n + f.size, 0);
  let removed = 0;
  for (const f of files) {
    const overSize = limits.maxBytes !== null && bytes > limits.maxBytes;
    if (f.mtime >= cutoff && !overSize) break;
    await rm(f.path, { force: true });
    bytes -= f.size;
    removed += 1;
  }
  return { removed, files: files.length - removed, bytes, keptInFlight: 0 };
}
