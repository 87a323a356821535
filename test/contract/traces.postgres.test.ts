import { afterAll, describe } from 'vitest';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from './pg-schema.ts';
import { traceContract } from './trace-contract.ts';
import { retentionContract } from './trace-retention-contract.ts';

const schemas: string[] = [];
if (await postgresReachable()) {
  const open = async () => {
    const schema = freshSchemaName('t_traces');
    schemas.push(schema);
    return openPostgresTraces({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema);
  };
  traceContract('postgres', open);
  retentionContract('postgres', open);
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });
} else {
  describe.skip('trace store contract: postgres (no server)', () => undefined);
}
