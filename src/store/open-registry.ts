/** Opens the registry engine the configuration selects (DESIGN §4). */
import path from 'node:path';
import type { Config } from '../config.ts';
import type { RegistryStore } from './registry-port.ts';
import { SqliteRegistryStore } from './sqlite/registry-store.ts';

export async function openRegistryStore(config: Config): Promise<RegistryStore> {
  if (config.databaseUrl !== undefined) {
    throw new Error('DATABASE_URL is set, but this build has no PostgreSQL registry engine yet; unset it to use the embedded store');
  }
  return new SqliteRegistryStore(path.join(config.dataDir, 'registry.sqlite'));
}
