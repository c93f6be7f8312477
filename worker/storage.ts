// What a worker keeps on disk or in a database beside Temporal, and its
// retention: the effect ledger (AGENT_LEDGER_URL or LEDGER_DIR), the traces
// (TRACE_DIR) and the message store (MESSAGE_STORE_DIR). Retention runs in
// the background while the worker runs: a pass when it starts polling, then
// every AGENT_RETENTION_INTERVAL_MS. The maximum age defaults to the namespace's
// retention, so nothing a retry or a reset could still ask for is removed
// (docs/effects.md, "Retention").
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { LedgerConfig, RetentionConfig } from '../node/config.js';
import { openEffectStore } from '../activities/effects/open-store.js';
import type { EffectStore } from '../activities/effects/record.js';
import { sweepLedger } from '../activities/effects/retention.js';
import { sweepMessages } from '../activities/message-retention.js';
import { namespaceFolder } from '../activities/message-store.js';
import { sweepTraces } from '../activities/trace-retention.js';
import { namespaceRetentionMs, workflowStates } from '../activities/workflow-state.js';
import { ENV_NAMES, type SettingNames } from './setting-names.js';

/** When the server does not say its namespace's retention: Temporal's own default for a new namespace (3 days). */
const FALLBACK_MAX_AGE_MS = 3 * 24 * 3_600_000;

export type Log = Pick<Console, 'log' | 'warn'>;

/**
 * Opens the ledger and reads it once, so a database that cannot be reached
 * (or a folder that cannot be made) stops the worker at start with the reason
 * instead of failing its first write.
 */
export async function openLedger(ledger: LedgerConfig): Promise<EffectStore> {
  const effects = openEffectStore(ledger);
  try {
    await effects.read('(start-up check)');
  } catch (err) {
    await effects.close().catch(() => {});
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(why.startsWith('effect ledger') ? why : `effect ledger ${effects.where}: ${why}`);
  }
  return effects;
}

export interface RetentionTarget {
  effects: EffectStore;
  connection: NativeConnection;
  namespace: string;
  traceDir: string;
  messageStoreDir: string;
  retention: RetentionConfig;
  log?: Log;
  names?: SettingNames;
}

/** Starts the retention passes; the returned function stops them, waiting for one under way. Nothing runs when retention is off. */
export async function startRetention(t: RetentionTarget): Promise<() => Promise<void>> {
  const { effects, retention: r } = t;
  const log = t.log ?? console;
  if (!r.enabled) return async () => {};
  const client = new Client({ connection: t.connection, namespace: t.namespace });
  const namespaceMs = await namespaceRetentionMs(client, t.namespace).catch(() => null);
  const maxAgeMs = r.maxAgeMs ?? namespaceMs ?? FALLBACK_MAX_AGE_MS;
  if (r.maxAgeMs !== null && namespaceMs !== null && r.maxAgeMs < namespaceMs) {
    log.warn(
      `retention: ${(t.names ?? ENV_NAMES).retentionMaxAge}=${r.maxAgeMs} is shorter than namespace ${t.namespace}'s retention (${namespaceMs} ms): ` +
        'a run reset after its ledger records are gone may do its writes again',
    );
  }
  // Only this namespace's records and traces are judged, and by this namespace's server: see activities/workflow-state.ts.
  const own = { namespace: t.namespace, namespaceRetentionMs: namespaceMs };
  const others = (n: number | undefined) => (n ? `, ${n} of other namespaces (or of older code) left alone` : '');
  const pass = async () => {
    const stateOf = workflowStates(client);
    const parts: [string, () => Promise<string | null>][] = [
      [
        `ledger ${effects.where}`,
        async () => {
          const x = await sweepLedger(effects, client, { maxAgeMs, maxBytes: r.ledgerMaxBytes, ...own });
          return x.removed === 0 && !r.logEveryPass
            ? null
            : `removed ${x.removed} records, ${x.size.records} left (${x.size.bytes} bytes), ${x.keptInFlight} of running workflows kept${others(x.keptOthers)}`;
        },
      ],
      [
        `traces ${t.traceDir}`,
        async () => {
          const x = await sweepTraces(t.traceDir, stateOf, { maxAgeMs, maxBytes: r.traceMaxBytes, ...own });
          return x.removed === 0 && !r.logEveryPass ? null : `removed ${x.removed} files, ${x.files} left (${x.bytes} bytes), ${x.keptInFlight} of running workflows kept${others(x.keptOthers)}`;
        },
      ],
      [
        `messages ${t.messageStoreDir}`,
        async () => {
          // This namespace's folder, then the root older code filed every namespace's messages in (read by no worker of this version).
          const x = await sweepMessages(namespaceFolder(t.messageStoreDir, t.namespace), { maxAgeMs, maxBytes: r.messageStoreMaxBytes });
          const legacy = await sweepMessages(t.messageStoreDir, { maxAgeMs, maxBytes: null });
          const removed = x.removed + legacy.removed;
          return removed === 0 && !r.logEveryPass ? null : `removed ${removed} files, ${x.files + legacy.files} left (${x.bytes + legacy.bytes} bytes)`;
        },
      ],
    ];
    for (const [what, sweep] of parts) {
      await sweep().then(
        // A pass that removed nothing says nothing (unless AGENT_RETENTION_LOG=passes): the worker's output stays its own few lines.
        (line) => line !== null && log.log(`retention: ${what}: ${line} (max age ${maxAgeMs} ms)`),
        (err: unknown) => log.warn(`retention: ${what}: pass failed: ${err instanceof Error ? err.message : String(err)}`),
      );
    }
  };
  let running: Promise<void> | null = null;
  // One pass at a time: a slow store never stacks passes up.
  const sweep = () => void (running ??= pass().finally(() => (running = null)));
  sweep();
  const timer = setInterval(sweep, r.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
