// The effect ledger in a folder: the one-host default. Each key has its own
// folder of numbered versions (1.json, 2.json, …); a write is the next number,
// made by link(2), which fails with EEXIST when the number exists — an
// exclusive create (O_EXCL's guarantee) of a file that is complete before
// anyone can see it. So two attempts never both win a claim or a change, and a
// crash leaves the previous version or the next one, never half. Every file and
// the folders that name it are fsynced before the write counts: a power cut
// does not take back a claim that an attempt acted on. Records hold tool
// results: files are 0600 and folders 0700, the worker's user's only.
import { createHash, randomUUID } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { EffectRecord, EffectStore, Versioned } from './record.js';

const VERSION_FILE = /^(\d+)\.json$/;
/** A released claim: the key may be claimed again, at a higher version. */
type Tombstone = { released: true; key: string };
type OnDisk = EffectRecord | Tombstone;
const isTombstone = (x: OnDisk): x is Tombstone => 'released' in x;

export class FolderEffectStore implements EffectStore {
  readonly where: string;

  constructor(private readonly dir: string) {
    this.where = `folder ${dir}`;
  }

  private keyDir(key: string): string {
    const h = createHash('sha256').update(key).digest('hex');
    return join(this.dir, h.slice(0, 2), h);
  }

  async read(key: string): Promise<{ found: Versioned | null; now: number }> {
    const latest = await this.latest(this.keyDir(key));
    const found = latest && !isTombstone(latest.data) ? { record: latest.data, version: latest.version } : latest ? null : await this.legacy(key);
    return { found, now: Date.now() };
  }

  async create(record: EffectRecord): Promise<number | null> {
    const dir = this.keyDir(record.key);
    for (;;) {
      const latest = await this.latest(dir);
      if (latest && !isTombstone(latest.data)) return null;
      if (!latest && (await this.legacy(record.key))) return null;
      const next = (latest?.version ?? 0) + 1;
      if (await this.put(dir, next, record)) return next;
      // Another writer took that number: look again (it may be a claim, or a release).
    }
  }

  async replace(record: EffectRecord, version: number): Promise<boolean> {
    return this.put(this.keyDir(record.key), version + 1, record);
  }

  async release(key: string, version: number): Promise<boolean> {
    return this.put(this.keyDir(key), version + 1, { released: true, key });
  }

  async oldest(before: number, limit: number, offset = 0): Promise<EffectRecord[]> {
    const out: EffectRecord[] = [];
    for (const dir of await this.keyDirs()) {
      const latest = await this.latest(dir).catch(() => null);
      if (latest && !isTombstone(latest.data) && latest.data.claimedAt < before) out.push(latest.data);
    }
    return out.sort((a, b) => a.claimedAt - b.claimedAt || (a.key < b.key ? -1 : 1)).slice(offset, offset + limit);
  }

  async remove(keys: readonly string[]): Promise<number> {
    let n = 0;
    for (const key of keys) {
      const dir = this.keyDir(key);
      if (!existsSync(dir)) continue;
      await rm(dir, { recursive: true, force: true });
      n += 1;
    }
    return n;
  }

  async size(): Promise<{ records: number; bytes: number }> {
    let records = 0;
    let bytes = 0;
    for (const dir of await this.keyDirs()) {
      records += 1;
      for (const f of await readdir(dir).catch(() => [])) bytes += (await stat(join(dir, f)).catch(() => ({ size: 0 }))).size;
    }
    return { records, bytes };
  }

  async close(): Promise<void> {}

  private async keyDirs(): Promise<string[]> {
    const out: string[] = [];
    for (const shard of await readdir(this.dir).catch(() => [])) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const k of await readdir(join(this.dir, shard)).catch(() => [])) if (/^[0-9a-f]{64}$/.test(k)) out.push(join(this.dir, shard, k));
    }
    return out;
  }

  /** The highest version in a key's folder. Older versions are removed after a write, so a read may race one away: then it looks again. */
  private async latest(dir: string): Promise<{ version: number; data: OnDisk } | null> {
    for (let tries = 0; ; tries++) {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
      const versions = names.map((n) => VERSION_FILE.exec(n)?.[1]).filter((v): v is string => v !== undefined).map(Number);
      if (versions.length === 0) return null;
      const version = Math.max(...versions);
      try {
        return { version, data: JSON.parse(await readFile(join(dir, `${version}.json`), 'utf8')) as OnDisk };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || tries > 100) throw err;
      }
    }
  }

  /** Writes version `n` unless it exists: the file is written and fsynced aside, then linked under its number. */
  private async put(dir: string, n: number, data: OnDisk): Promise<boolean> {
    const created = !existsSync(dir);
    if (created) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await fsyncDir(dirname(dir));
      await fsyncDir(dirname(dirname(dir)));
    }
    const tmp = join(dir, `.${randomUUID()}.tmp`);
    const fh = await open(tmp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
    try {
      await fh.writeFile(JSON.stringify(data));
      await fh.sync();
    } finally {
      await fh.close();
    }
    let won = true;
    try {
      await link(tmp, join(dir, `${n}.json`));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      won = false;
    } finally {
      await unlink(tmp).catch(() => {});
    }
    if (!won) return false;
    await fsyncDir(dir);
    // Only the latest version is ever read: the older ones go (readers that raced them look again).
    for (const name of await readdir(dir)) {
      const v = VERSION_FILE.exec(name)?.[1];
      if (v !== undefined && Number(v) < n) await unlink(join(dir, name)).catch(() => {});
    }
    return true;
  }

  /**
   * A record of the ledger before versions (`<sha256>.json` beside the key
   * folders), read so a write in flight across the upgrade is not done again:
   * a result is replayed as before, an intent without a result is an unknown
   * outcome. Never written.
   */
  private async legacy(key: string): Promise<Versioned | null> {
    const file = join(this.dir, `${createHash('sha256').update(key).digest('hex')}.json`);
    let old: { state?: string; at?: string; result?: string };
    try {
      old = JSON.parse(await readFile(file, 'utf8')) as typeof old;
    } catch {
      return null;
    }
    const at = Date.parse(old.at ?? '') || 0;
    const holder = { runId: '', attempt: 0, worker: 'a worker of an earlier version', token: 'legacy' };
    const base = { key, workflowId: key.split('@')[0] ?? '', toolName: 'write', holder, claimedAt: at, leaseUntil: at };
    const record: EffectRecord =
      old.state === 'done' && typeof old.result === 'string'
        ? { ...base, state: 'done', outcome: { ok: true, content: old.result }, doneAt: at }
        : { ...base, state: 'unknown', unknownAt: at, unknownReason: 'recorded by a worker of an earlier version' };
    // Version 0: a claim on it creates version 1 in the key's folder, which then wins over this file.
    return { record, version: 0 };
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, constants.O_RDONLY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
