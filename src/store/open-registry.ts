/** Opens the registry engine the configuration selects (DESIGN §4). */
import path from 'node:path';
import type { Config } from '../config.ts';
import { openPostgresRegistry } from './postgres/open.ts';
import type { RegistryStore } from './registry-port.ts';
import { SqliteRegistryStore } from './sqlite/registry-store.ts';

/**
 * The registry store for this configuration: PostgreSQL when `databaseUrl` is set, else the SQLite
 * file `registry.sqlite` in `dataDir` (the directory is created; migrations run on open).
 */
export async function openRegistryStore(config: Config): Promise<RegistryStore> {
  if (config.databaseUrl !== undefined) return openPostgresRegistry(config);
  return new SqliteRegistryStore(path.join(config.dataDir, 'registry.sqlite'));
}
