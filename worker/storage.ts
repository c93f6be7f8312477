// What a worker keeps on disk or in a database beside Temporal, and its
// retention: the effect ledger (AGENT_LEDGER_URL or LEDGER_DIR), the traces
// (TRACE_DIR) and the message store (MESSAGE_STORE_DIR). Retention runs in
// the background while the worker runs: a pass at start, then every
// AGENT_RETENTION_INTERVAL_MS. The maximum age defaults to the namespace's
// retention, so nothing a retry or a reset could still ask for is removed
// (docs/effects.md, "Retention").
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { HarnessConfig } from '../common/config.js';
import { openEffectStore } from '../activities/effects/open-store.js';
import type { EffectStore } from '../activities/effects/record.js';
import { sweepLedger } from '../activities/effects/retention.js';
import { sweepMessages } from '../activities/message-retention.js';
import { sweepTraces } from '../activities/trace-retention.js';
import { namespaceRetentionMs, workflowStates } from '../activities/workflow-state.js';

/** When the server does not say its namespace's retention: Temporal's own default for a new namespace (3 days). */
const FALLBACK_MAX_AGE_MS = 3 * 24 * 3_600_000;

export interface WorkerStorage {
  /** The effect ledger the tool activities use. */
  effects: EffectStore;
  /** Stops the retention passes (waiting for one under way) and closes the ledger. */
  close(): Promise<void>;
}

type Log = Pick<Console, 'log' | 'warn'>;

/**
 * Opens the ledger and reads it once, so a database that cannot be reached
 * (or a folder that cannot be made) stops the worker at start with the reason
 * instead of failing its first write.
 */
export async function startWorkerStorage(cfg: HarnessConfig, connection: NativeConnection, log: Log = console): Promise<WorkerStorage> {
  const effects = openEffectStore(cfg.ledger);
  try {
    await effects.read('(start-up check)');
  } catch (err) {
    await effects.close().catch(() => {});
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(why.startsWith('effect ledger') ? why : `effect ledger ${effects.where}: ${why}`);
  }
  const r = cfg.retention;
  if (!r.enabled) return { effects, close: () => effects.close() };
  const client = new Client({ connection, namespace: cfg.namespace });
  const namespaceMs = await namespaceRetentionMs(client, cfg.namespace).catch(() => null);
  const maxAgeMs = r.maxAgeMs ?? namespaceMs ?? FALLBACK_MAX_AGE_MS;
  if (r.maxAgeMs !== null && namespaceMs !== null && r.maxAgeMs < namespaceMs) {
    log.warn(
      `retention: AGENT_RETENTION_MAX_AGE_MS=${r.maxAgeMs} is shorter than namespace ${cfg.namespace}'s retention (${namespaceMs} ms): ` +
        'a run reset after its ledger records are gone may do its writes again',
    );
  }
  const pass = async () => {
    const stateOf = workflowStates(client);
    const parts: [string, () => Promise<string | null>][] = [
      [
        `ledger ${effects.where}`,
        async () => {
          const x = await sweepLedger(effects, client, { maxAgeMs, maxBytes: r.ledgerMaxBytes });
          return x.removed === 0 && !r.logEveryPass ? null : `removed ${x.removed} records, ${x.size.records} left (${x.size.bytes} bytes), ${x.keptInFlight} of running workflows kept`;
        },
      ],
      [
        `traces ${cfg.traceDir}`,
        async () => {
          const x = await sweepTraces(cfg.traceDir, stateOf, { maxAgeMs, maxBytes: r.traceMaxBytes });
          return x.removed === 0 && !r.logEveryPass ? null : `removed ${x.removed} files, ${x.files} left (${x.bytes} bytes), ${x.keptInFlight} of running workflows kept`;
        },
      ],
      [
        `messages ${cfg.messageStoreDir}`,
        async () => {
          const x = await sweepMessages(cfg.messageStoreDir, { maxAgeMs, maxBytes: r.messageStoreMaxBytes });
          return x.removed === 0 && !r.logEveryPass ? null : `removed ${x.removed} files, ${x.files} left (${x.bytes} bytes)`;
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
  return {
    effects,
    close: async () => {
      clearInterval(timer);
      await running;
      await effects.close();
    },
  };
}
