// The idempotency ledger of write tools. A write records its intent before
// acting and its result after, under the call's idempotency key; a retried
// activity (a worker killed mid-write, a lost completion) finds the record and
// does not act twice. Lives beside the workspaces, out of the tools' reach.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type LedgerEntry = { state: 'started'; at: string } | { state: 'done'; at: string; result: string };

export class Ledger {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  private file(key: string): string {
    return join(this.dir, createHash('sha256').update(key).digest('hex') + '.json');
  }

  get(key: string): LedgerEntry | null {
    const f = this.file(key);
    return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as LedgerEntry) : null;
  }

  put(key: string, entry: LedgerEntry): void {
    // Write then rename: a crash leaves the old entry or the new one, never half.
    const f = this.file(key);
    writeFileSync(f + '.tmp', JSON.stringify({ key, ...entry }));
    renameSync(f + '.tmp', f);
  }
}
