// The store the configuration names (node/config.ts LedgerConfig).
import type { LedgerConfig } from '../../node/config.js';
import { FolderEffectStore } from './folder-store.js';
import { PostgresEffectStore } from './postgres-store.js';
import type { EffectStore } from './record.js';

export function openEffectStore(cfg: LedgerConfig): EffectStore {
  return cfg.kind === 'postgres' ? PostgresEffectStore.open(cfg.url) : new FolderEffectStore(cfg.dir);
}
