/**
 * The trace contract on PostgreSQL, once per way its statistics query finds rows, as on DuckDB:
 * nothing sealed (every row from the unsealed tails), everything sealed (every row from
 * skill_spans), and sealed part of the way through loading (both at once); retention before and
 * after sealing. The data crosses a month, so every answer reads two monthly partitions of `spans`
 * (partitions.ts), and retention drops the first.
 */
import { afterAll, describe } from 'vitest';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import type { PostgresTraceStore } from '../../src/store/postgres/trace-store.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from './pg-schema.ts';
import { END, traceContract } from './trace-contract.ts';
import { agentContract } from './trace-agent-contract.ts';
import { retentionContract } from './trace-retention-contract.ts';
import { identityContract } from './trace-identity-contract.ts';
import { toolUsageContract } from './tool-usage-contract.ts';
import { serverUsageContract } from './server-usage-contract.ts';
import { watermarkContract } from './trace-watermark-contract.ts';
import { callPairsContract } from './call-pairs-contract.ts';
import { evaluationContract } from './trace-evaluation-contract.ts';
import { subjectFactsContract } from './subject-facts-contract.ts';
import { evaluationFactsContract } from './evaluation-facts-contract.ts';
import { agentNamesContract } from './agent-names-contract.ts';

const schemas: string[] = [];
if (await postgresReachable()) {
  // "Now" is the data's end, so its months (September and October 2026) are always partitioned.
  const openIn = (schema: string) =>
    openPostgresTraces({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema, { sealEveryMs: 0, now: () => END });
  const open = async () => {
    const schema = freshSchemaName('t_traces');
    schemas.push(schema);
    return openIn(schema);
  };
  const seal = async (store: TraceStore) => {
    if (!(await (store as PostgresTraceStore).seal())) throw new Error('the sealing lock was taken');
  };
  traceContract('postgres, unsealed', open);
  traceContract('postgres, sealed', open, { afterChunk: seal });
  traceContract('postgres, sealed part of the way', open, {
    afterChunk: async (store, chunk) => {
      if (chunk === 1) await seal(store);
    },
  });
  agentContract('postgres, unsealed', open);
  agentContract('postgres, sealed', open, { afterChunk: seal });
  retentionContract('postgres, sealed before pruning', open, { beforePrune: seal });
  retentionContract('postgres, pruned unsealed', open);
  retentionContract('postgres, pruned unsealed, then sealed', open, { afterPrune: seal });
  identityContract('postgres', open, { seal });
  toolUsageContract('postgres', open);
  serverUsageContract('postgres', open);
  // The replica opens the schema the contract's store was opened in (the last one made).
  watermarkContract('postgres', open, { seal, replica: async () => openIn(schemas.at(-1) as string) });
  callPairsContract('postgres', open, { seal });
  evaluationContract('postgres, unsealed', open);
  evaluationContract('postgres, sealed part of the way', open, {
    afterChunk: async (store, chunk) => {
      if (chunk === 1) await seal(store);
    },
  });
  subjectFactsContract('postgres, unsealed', open);
  subjectFactsContract('postgres, sealed', open, { afterChunk: seal });
  subjectFactsContract('postgres, sealed part of the way', open, {
    afterChunk: async (store, chunk) => (chunk === 1 ? seal(store) : undefined),
  });
  evaluationFactsContract('postgres, unsealed', open);
  evaluationFactsContract('postgres, sealed', open, { afterChunk: seal });
  evaluationFactsContract('postgres, sealed part of the way', open, {
    afterChunk: async (store, chunk) => (chunk === 1 ? seal(store) : undefined),
  });
  // Another replica on the same schema remembers none of the names the first admitted.
  const schemaOf = new WeakMap<TraceStore, string>();
  agentNamesContract(
    'postgres',
    async () => {
      const store = await open();
      schemaOf.set(store, schemas.at(-1) as string);
      return store;
    },
    async (store) => {
      const schema = schemaOf.get(store) as string;
      await store.close();
      const replica = await openIn(schema);
      schemaOf.set(replica, schema);
      return replica;
    },
  );
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });
} else {
  describe.skip('trace store contract: postgres (no server)', () => undefined);
}
