/** Opens the registry engine the configuration selects (DESIGN §4). */
import path from 'node:path';
import type { Config } from '../config.ts';
import type { ReadyProgress } from '../shared/api-document.ts';
import { openPostgresRegistry } from './postgres/open.ts';
import type { RegistryStore } from './registry-port.ts';
import { SqliteRegistryStore } from './sqlite/registry-store.ts';

/**
 * The registry store for this configuration: PostgreSQL when `databaseUrl` is set, else the SQLite
 * file `registry.sqlite` in `dataDir` (the directory is created; migrations run on open, and
 * `progress` hears how a long fill of ready-to-send documents goes).
 */
export async function openRegistryStore(config: Config, progress?: ReadyProgress): Promise<RegistryStore> {
  if (config.databaseUrl !== undefined) return openPostgresRegistry(config, 'public', progress);
  return new SqliteRegistryStore(path.join(config.dataDir, 'registry.sqlite'), progress);
}
