import { afterAll, describe } from 'vitest';
import { openPostgresRegistry } from '../../src/store/postgres/open.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from './pg-schema.ts';
import { registryContract } from './registry-contract.ts';

const schemas: string[] = [];
if (await postgresReachable()) {
  registryContract('postgres', async () => {
    const schema = freshSchemaName('t_registry');
    schemas.push(schema);
    return openPostgresRegistry({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema);
  });
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });
} else {
  describe.skip('registry store contract: postgres (no server)', () => undefined);
}
