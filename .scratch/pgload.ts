import { openPostgresTraces } from '../src/store/postgres/open.ts';
import { demoSpans } from '../src/traces/demo-traces.ts';
import { compileAggregate } from '../src/store/stats-sql.ts';
import { skillRows } from '../src/store/postgres/trace-store.ts';
import { POSTGRES } from '../src/store/sql-dialect.ts';
import type { AggregateQuery } from '../src/store/trace-port.ts';
const N = Number(process.argv[2] ?? 1_000_000);
const schema = process.argv[3] ?? 'exp1m';
const URL = 'postgres://postgres@127.0.0.1:5432/test';
const END = Date.UTC(2026, 10, 1) / 1000;
const skills = Array.from({ length: 13 }, (_, i) => ({ id: `skill-${i}`, workspaceId: `ws-${i % 4}` }));
const query: AggregateQuery = {
  orgId: 'org',
  skill: 'skill-0',
  startS: END - 30 * 86400,
  endS: END,
  workspaceIds: ['ws-0', 'ws-1', 'ws-2', 'ws-3'],
  filters: [],
  groupBy: ['model'],
  measures: ['traces', 'tokens', 'error_rate', 'latency_p99'],
  bucket: 'day',
};
const c = compileAggregate(query, skillRows, POSTGRES);
console.log(c.sql);
console.log(JSON.stringify(c.params));
if (N > 0) {
  const post = await openPostgresTraces({ databaseUrl: URL, requestTimeoutMs: 120_000 }, schema);
  for (const batch of demoSpans(
    { orgId: 'org', skills, users: ['u1', 'u2', 'u3'], spans: N, endS: END, days: 90 },
    20_000,
  ))
    await post.insertSpans(batch);
  await post.close();
}
