// The store the configuration names (common/config.ts LedgerConfig).
import type { LedgerConfig } from '../../common/config';
import { FolderEffectStore } from './folder-store';
import { PostgresEffectStore } from './postgres-store';
import type { EffectStore } from './record';

export function openEffectStore(cfg: LedgerConfig): EffectStore {
  return cfg.kind === 'postgres' ? PostgresEffectStore.open(cfg.url) : new FolderEffectStore(cfg.dir);
}
