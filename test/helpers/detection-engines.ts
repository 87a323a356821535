/**
 * Detection's stores on both engine pairs: SQLite + DuckDB always, PostgreSQL (registry and traces
 * in fresh schemas, dropped after the file) when a server answers, else a skipped describe.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe } from 'vitest';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { openPostgresRegistry, openPostgresTraces } from '../../src/store/postgres/open.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';

export interface DetectionStores {
  registry: RegistryStore;
  traces: TraceStore;
}

/**
 * Calls `suite` once per engine pair. `name` prefixes files and schemas; `endS` is the PostgreSQL
 * trace store's now (its partitions); `title` names the skipped suite.
 */
export async function onDetectionEngines(
  name: string,
  title: string,
  endS: number,
  suite: (engine: string, open: () => Promise<DetectionStores>) => void,
): Promise<void> {
  suite('sqlite and duckdb', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), `gw-${name}-`)), 'registry.sqlite');
    const traces = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    return { registry: new SqliteRegistryStore(file), traces };
  });
  if (!(await postgresReachable())) {
    describe.skip(`${title}: postgres (no server)`, () => undefined);
    return;
  }
  const schemas: string[] = [];
  suite('postgres', async () => {
    const registrySchema = freshSchemaName(`t_${name}_registry`);
    const traceSchema = freshSchemaName(`t_${name}_traces`);
    schemas.push(registrySchema, traceSchema);
    const options = { databaseUrl: PG_URL, requestTimeoutMs: 10_000 };
    return {
      registry: await openPostgresRegistry(options, registrySchema),
      traces: await openPostgresTraces(options, traceSchema, { sealEveryMs: 0, now: () => endS }),
    };
  });
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });
}
