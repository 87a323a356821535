/**
 * The registry stores a test file runs its cases against: SQLite in a file of its own, and
 * PostgreSQL in a fresh schema when a server answers (dropped after the file's tests).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { openPostgresRegistry } from '../../src/store/postgres/open.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';

/** [engine, open a new store] pairs; `prefix` names the SQLite folders and PostgreSQL schemas. */
export async function registryEngines(prefix: string): Promise<[string, () => Promise<RegistryStore>][]> {
  const schemas: string[] = [];
  const engines: [string, () => Promise<RegistryStore>][] = [
    [
      'sqlite',
      async () =>
        new SqliteRegistryStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), `gw-${prefix}-`)), 'r.sqlite')),
    ],
  ];
  if (await postgresReachable())
    engines.push([
      'postgres',
      async () => {
        const schema = freshSchemaName(`t_${prefix}`);
        schemas.push(schema);
        return openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema);
      },
    ]);
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });
  return engines;
}
