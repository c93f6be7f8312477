// The store the configuration names (common/config.ts LedgerConfig).
import type { LedgerConfig } from '../../common/config.js';
import { FolderEffectStore } from './folder-store.js';
import { PostgresEffectStore } from './postgres-store.js';
import type { EffectStore } from './record.js';

export function openEffectStore(cfg: LedgerConfig): EffectStore {
  return cfg.kind === 'postgres' ? PostgresEffectStore.open(cfg.url) : new FolderEffectStore(cfg.dir);
}
