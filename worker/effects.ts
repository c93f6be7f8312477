// The worker's effect ledger (AGENT_LEDGER_URL or LEDGER_DIR) and its
// retention, applied in the background while the worker runs: the first pass
// at start, then every AGENT_RETENTION_INTERVAL_MS. The maximum age defaults
// to the namespace's retention, so a record lives as long as the server could
// still reset (and re-run) its run.
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { HarnessConfig } from '../common/config';
import { openEffectStore } from '../activities/effects/open-store';
import type { EffectStore } from '../activities/effects/record';
import { namespaceRetentionMs, sweepLedger } from '../activities/effects/retention';

/** When the server does not say its namespace's retention: Temporal's own default for a new namespace (3 days). */
const FALLBACK_MAX_AGE_MS = 3 * 24 * 3_600_000;

export interface WorkerEffects {
  store: EffectStore;
  /** Stops the retention passes (waiting for one under way) and closes the store. */
  close(): Promise<void>;
}

export async function startWorkerEffects(cfg: HarnessConfig, connection: NativeConnection, log: Pick<Console, 'log' | 'warn'> = console): Promise<WorkerEffects> {
  const store = openEffectStore(cfg.ledger);
  if (!cfg.retention.enabled) return { store, close: () => store.close() };
  const client = new Client({ connection, namespace: cfg.namespace });
  const namespaceMs = await namespaceRetentionMs(client, cfg.namespace).catch(() => null);
  const maxAgeMs = cfg.retention.maxAgeMs ?? namespaceMs ?? FALLBACK_MAX_AGE_MS;
  if (cfg.retention.maxAgeMs !== null && namespaceMs !== null && cfg.retention.maxAgeMs < namespaceMs) {
    log.warn(
      `retention: AGENT_RETENTION_MAX_AGE_MS=${cfg.retention.maxAgeMs} is shorter than namespace ${cfg.namespace}'s retention (${namespaceMs} ms): ` +
        'a run reset after its records are gone may do its writes again',
    );
  }
  let pass: Promise<void> | null = null;
  const sweep = () => {
    // One pass at a time: a slow store never stacks passes up.
    pass ??= sweepLedger(store, client, { maxAgeMs, maxBytes: cfg.retention.maxBytes })
      .then(
        (r) => log.log(`retention: ledger ${store.where}: removed ${r.removed} records, ${r.size.records} left (${r.size.bytes} bytes), ${r.keptInFlight} of running workflows kept (max age ${maxAgeMs} ms)`),
        (err: unknown) => log.warn(`retention: ledger ${store.where}: pass failed: ${err instanceof Error ? err.message : String(err)}`),
      )
      .finally(() => (pass = null));
  };
  sweep();
  const timer = setInterval(sweep, cfg.retention.intervalMs);
  timer.unref();
  return {
    store,
    close: async () => {
      clearInterval(timer);
      await pass;
      await store.close();
    },
  };
}
