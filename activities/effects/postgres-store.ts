// The effect ledger in PostgreSQL (AGENT_LEDGER_URL=postgres://…): what
// workers on several hosts share. One row per idempotency key, the key the
// primary key, so a claim is an insert that the unique constraint lets one
// attempt win; every change is an UPDATE … WHERE version = the version read
// (a compare-and-set in one statement); the lease lives in the row and is
// compared with the database's clock, never a worker's. The table is created
// on first use, under an advisory lock so workers starting together do not
// race; the database itself is created when missing (its own database: the
// ledger never shares tables with Temporal's).
import pg from 'pg';
import type { EffectRecord, EffectStore, Holder, RecordedOutcome, Versioned } from './record.js';

const TABLE = 'agent_effects';
/** Any constant: serialises the schema set-up of workers that start together. */
const SCHEMA_LOCK = 7_305_118_422;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS ${TABLE} (
  key            text PRIMARY KEY,
  workflow_id    text NOT NULL,
  tool_name      text NOT NULL,
  state          text NOT NULL CHECK (state IN ('claimed', 'done', 'unknown', 'released')),
  holder         jsonb NOT NULL,
  claimed_at     timestamptz NOT NULL,
  lease_until    timestamptz NOT NULL,
  outcome        jsonb,
  done_at        timestamptz,
  late           boolean NOT NULL DEFAULT false,
  unknown_at     timestamptz,
  unknown_by     text,
  unknown_reason text,
  version        integer NOT NULL
);
CREATE INDEX IF NOT EXISTS ${TABLE}_claimed_at ON ${TABLE} (claimed_at);
-- The claiming workflow's namespace: retention removes only its own (NULL: a row of older code, kept).
ALTER TABLE ${TABLE} ADD COLUMN IF NOT EXISTS namespace text;
`;

interface Row {
  key: string;
  workflow_id: string;
  tool_name: string;
  state: string;
  holder: Holder;
  claimed_at: Date;
  lease_until: Date;
  outcome: RecordedOutcome | null;
  done_at: Date | null;
  late: boolean;
  unknown_at: Date | null;
  unknown_by: string | null;
  unknown_reason: string | null;
  version: number;
  namespace: string | null;
}

const COLUMNS = 'key, workflow_id, tool_name, state, holder, claimed_at, lease_until, outcome, done_at, late, unknown_at, unknown_by, unknown_reason, namespace';
const COLUMN_COUNT = COLUMNS.split(', ').length;
/** The values of COLUMNS for a record, in order ($1…$14). */
function values(r: EffectRecord): unknown[] {
  const ts = (ms: number | undefined) => (ms === undefined ? null : new Date(ms));
  return [
    r.key,
    r.workflowId,
    r.toolName,
    r.state,
    JSON.stringify(r.holder),
    ts(r.claimedAt),
    ts(r.leaseUntil),
    r.outcome === undefined ? null : JSON.stringify(r.outcome),
    ts(r.doneAt),
    r.late === true,
    ts(r.unknownAt),
    r.unknownBy ?? null,
    r.unknownReason ?? null,
    r.namespace ?? null,
  ];
}

function toRecord(row: Row): EffectRecord {
  return {
    key: row.key,
    workflowId: row.workflow_id,
    ...(row.namespace !== null && row.namespace !== undefined ? { namespace: row.namespace } : {}),
    toolName: row.tool_name,
    state: row.state as EffectRecord['state'],
    holder: row.holder,
    claimedAt: row.claimed_at.getTime(),
    leaseUntil: row.lease_until.getTime(),
    ...(row.outcome ? { outcome: row.outcome } : {}),
    ...(row.done_at ? { doneAt: row.done_at.getTime() } : {}),
    ...(row.late ? { late: true } : {}),
    ...(row.unknown_at ? { unknownAt: row.unknown_at.getTime() } : {}),
    ...(row.unknown_by ? { unknownBy: row.unknown_by } : {}),
    ...(row.unknown_reason ? { unknownReason: row.unknown_reason } : {}),
  };
}

export class PostgresEffectStore implements EffectStore {
  readonly where: string;
  private ready: Promise<void> | null = null;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly url: URL,
  ) {
    this.where = `postgres ${url.hostname}:${url.port || 5432}${url.pathname}`;
  }

  /** Opens a pool; the table (and database) are made on first use, so a worker can start while the database is still coming up. */
  static open(url: string): PostgresEffectStore {
    const parsed = new URL(url);
    const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 10_000 });
    // An idle client losing its connection (a database restart) must not crash the worker: the next query reconnects.
    pool.on('error', () => {});
    return new PostgresEffectStore(pool, parsed);
  }

  async read(key: string): Promise<{ found: Versioned | null; now: number }> {
    await this.setUp();
    const { rows } = await this.pool.query<Row & { now: Date }>(
      `SELECT t.*, clock_timestamp() AS now FROM (SELECT 1) AS one LEFT JOIN ${TABLE} t ON t.key = $1 AND t.state <> 'released'`,
      [key],
    );
    const row = rows[0];
    return { found: row.key === null ? null : { record: toRecord(row), version: row.version }, now: row.now.getTime() };
  }

  async create(record: EffectRecord): Promise<number | null> {
    await this.setUp();
    // A released claim (a tombstone) is claimed again at a higher version; any other row wins.
    const { rows } = await this.pool.query<{ version: number }>(
      `INSERT INTO ${TABLE} (${COLUMNS}, version) VALUES (${Array.from({ length: COLUMN_COUNT }, (_, i) => `$${i + 1}`).join(',')}, 1)
       ON CONFLICT (key) DO UPDATE SET ${COLUMNS.split(', ').slice(1).map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, version = ${TABLE}.version + 1
       WHERE ${TABLE}.state = 'released'
       RETURNING version`,
      values(record),
    );
    return rows[0]?.version ?? null;
  }

  async replace(record: EffectRecord, version: number): Promise<boolean> {
    await this.setUp();
    const cols = COLUMNS.split(', ');
    const { rowCount } = await this.pool.query(
      `UPDATE ${TABLE} SET ${cols.slice(1).map((c, i) => `${c} = $${i + 2}`).join(', ')}, version = version + 1 WHERE key = $1 AND version = $${COLUMN_COUNT + 1}`,
      [...values(record), version],
    );
    return rowCount === 1;
  }

  async release(key: string, version: number): Promise<boolean> {
    await this.setUp();
    const { rowCount } = await this.pool.query(`UPDATE ${TABLE} SET state = 'released', version = version + 1 WHERE key = $1 AND version = $2`, [key, version]);
    return rowCount === 1;
  }

  async oldest(before: number, limit: number, offset = 0): Promise<EffectRecord[]> {
    await this.setUp();
    const { rows } = await this.pool.query<Row>(
      `SELECT * FROM ${TABLE} WHERE state <> 'released' AND claimed_at < $1 ORDER BY claimed_at, key LIMIT $2 OFFSET $3`,
      [Number.isFinite(before) ? new Date(before) : new Date(8.64e15), limit, offset],
    );
    return rows.map(toRecord);
  }

  async remove(keys: readonly string[]): Promise<number> {
    await this.setUp();
    if (keys.length === 0) return 0;
    // One transaction: a retention pass removes its batch whole or not at all.
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { rowCount } = await client.query(`DELETE FROM ${TABLE} WHERE key = ANY($1::text[])`, [keys]);
      // Released claims of these keys go too (they are rows of the same keys).
      await client.query('COMMIT');
      return rowCount ?? 0;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async size(): Promise<{ records: number; bytes: number }> {
    await this.setUp();
    const { rows } = await this.pool.query<{ records: string; bytes: string }>(
      `SELECT count(*) AS records, coalesce(sum(pg_column_size(t.*)), 0) AS bytes FROM ${TABLE} t WHERE state <> 'released'`,
    );
    return { records: Number(rows[0].records), bytes: Number(rows[0].bytes) };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private setUp(): Promise<void> {
    this.ready ??= this.createSchema().catch((err: unknown) => {
      // Not cached: the next call tries again (the database may be starting).
      this.ready = null;
      throw err;
    });
    return this.ready;
  }

  private async createSchema(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      // 3D000: the database does not exist yet. Make it (the ledger's own database), then connect again.
      if ((err as { code?: string }).code !== '3D000') throw new Error(`effect ledger ${this.where}: ${(err as Error).message}`);
      await this.createDatabase();
      client = await this.pool.connect();
    }
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      await client.query(SCHEMA);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw new Error(`effect ledger ${this.where}: cannot create table ${TABLE}: ${(err as Error).message}`);
    } finally {
      client.release();
    }
  }

  private async createDatabase(): Promise<void> {
    const name = decodeURIComponent(this.url.pathname.slice(1));
    const admin = new URL(this.url.href);
    admin.pathname = '/postgres';
    const c = new pg.Client({ connectionString: admin.href });
    await c.connect();
    try {
      await c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } catch (err) {
      // 42P04: another worker made it first.
      if ((err as { code?: string }).code !== '42P04') throw new Error(`effect ledger ${this.where}: cannot create database ${name}: ${(err as Error).message}`);
    } finally {
      await c.end();
    }
  }
}
