/**
 * The trace contract on DuckDB, once per way its statistics query finds rows: nothing sealed (every
 * row from the unsealed tails), everything sealed (every row from skill_spans), and sealed part of
 * the way through loading (both at once); and the engine in its worker thread, as the service runs it,
 * with a dictionary cache far smaller than the values stored.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ThreadedTraceStore } from '../../src/store/duckdb/threaded-store.ts';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';
import { agentContract } from './trace-agent-contract.ts';
import { traceContract } from './trace-contract.ts';
import { identityContract } from './trace-identity-contract.ts';
import { retentionContract } from './trace-retention-contract.ts';
import { toolUsageContract } from './tool-usage-contract.ts';
import { serverUsageContract } from './server-usage-contract.ts';
import { watermarkContract } from './trace-watermark-contract.ts';
import { callPairsContract } from './call-pairs-contract.ts';
import { evaluationContract } from './trace-evaluation-contract.ts';
import { subjectFactsContract } from './subject-facts-contract.ts';
import { evaluationFactsContract } from './evaluation-facts-contract.ts';
import { agentNamesContract } from './agent-names-contract.ts';

const open = () => DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
const seal = (store: TraceStore) => (store as DuckDbTraceStore).seal();

traceContract('duckdb, unsealed', open);
traceContract('duckdb, sealed', open, { afterChunk: seal });
traceContract('duckdb, sealed part of the way', open, {
  afterChunk: async (store, chunk) => {
    if (chunk === 1) await seal(store);
  },
});
// Room for 8 dimension values in memory: nearly every value is evicted and read back from dim_values.
traceContract(
  'duckdb in a worker thread, half sealed, 8 dictionary values in memory',
  () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0, dictionaryValues: 8, memoryLimitMb: 256 }),
  {
    afterChunk: async (store, chunk) => {
      if (chunk === 2) await (store as ThreadedTraceStore).seal();
    },
  },
);

// An agent's traces are read from the spans, sealed or not: sealing must change nothing of them.
agentContract('duckdb, unsealed', open);
agentContract(
  'duckdb in a worker thread, sealed part of the way, 8 dictionary values in memory',
  () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0, dictionaryValues: 8, memoryLimitMb: 256 }),
  { afterChunk: async (store, chunk) => (chunk === 2 ? (store as ThreadedTraceStore).seal() : undefined) },
);

retentionContract('duckdb, sealed before pruning', open, { beforePrune: seal });
retentionContract('duckdb, pruned unsealed', open);
retentionContract('duckdb, pruned unsealed, then sealed', open, { afterPrune: seal });

// Every day held; days dropped and loaded again under a bound of 500; days larger than a bound of
// 50 looked up in the table instead.
identityContract('duckdb', () => DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 }), { seal });
identityContract(
  'duckdb in a worker thread, holding 500 identities at most',
  () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0, identityMaxKeys: 500 }),
  { seal: (store) => (store as ThreadedTraceStore).seal() },
);
identityContract(
  'duckdb, days larger than 50 identities looked up',
  () => DuckDbTraceStore.open(':memory:', { sealEveryMs: 0, identityMaxKeys: 50 }),
  { seal },
);
toolUsageContract('duckdb in a worker thread', () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 }));
serverUsageContract('duckdb in a worker thread', () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 }));
watermarkContract('duckdb', open, { seal });
watermarkContract('duckdb in a worker thread', () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 }), {
  seal: (store) => (store as ThreadedTraceStore).seal(),
});
callPairsContract('duckdb', open, { seal });
// Days of more than 5 sides are not held: every side is looked up in tool_call_sides.
callPairsContract(
  'duckdb, sides looked up in the table',
  () => DuckDbTraceStore.open(':memory:', { sealEveryMs: 0, identityMaxKeys: 5 }),
  {
    seal,
  },
);
callPairsContract('duckdb in a worker thread', () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 }), {
  seal: (store) => (store as ThreadedTraceStore).seal(),
});

evaluationContract('duckdb, unsealed', open);
evaluationContract(
  'duckdb in a worker thread, sealed part of the way, 8 dictionary values in memory',
  () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0, dictionaryValues: 8, memoryLimitMb: 256 }),
  { afterChunk: async (store, chunk) => (chunk === 2 ? (store as ThreadedTraceStore).seal() : undefined) },
);
// Detection's facts: from the tails only, sealed part of the way, and in the worker thread sealed.
subjectFactsContract('duckdb, unsealed', open);
subjectFactsContract('duckdb, sealed part of the way', open, {
  afterChunk: async (store, chunk) => (chunk === 1 ? seal(store) : undefined),
});
subjectFactsContract(
  'duckdb in a worker thread, sealed',
  () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 }),
  {
    afterChunk: (store) => (store as ThreadedTraceStore).seal(),
  },
);
// Detection's evaluation scores: from the tails only, and in the worker thread sealed part of the way.
evaluationFactsContract('duckdb, unsealed', open);
evaluationFactsContract(
  'duckdb in a worker thread, sealed part of the way',
  () => ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 }),
  { afterChunk: async (store, chunk) => (chunk === 1 ? (store as ThreadedTraceStore).seal() : undefined) },
);

// Agent names as sent: on a file, reopened to read the names stored rather than those remembered.
const files = new WeakMap<TraceStore, string>();
const onFile = (threaded: boolean) => async (file?: string) => {
  const at = file ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-names-')), 'traces.duckdb');
  const store = threaded
    ? await ThreadedTraceStore.open(at, { sealEveryMs: 0 })
    : await DuckDbTraceStore.open(at, { sealEveryMs: 0 });
  files.set(store, at);
  return store;
};
for (const threaded of [false, true]) {
  const openAt = onFile(threaded);
  agentNamesContract(
    threaded ? 'duckdb in a worker thread' : 'duckdb',
    () => openAt(),
    async (store) => {
      await store.close();
      return openAt(files.get(store));
    },
  );
}
