/**
 * The tables each PostgreSQL store owns, and their size on disk for the `/metrics` gauges:
 * `pg_total_relation_size` (heap, indexes, TOAST) summed over a table's partition tree (a
 * partitioned table holds nothing itself; its monthly partitions do). A catalog lookup per table
 * and partition: cheap, and bounded by the tables below and the partitions retention keeps.
 * test/store/postgres-stored-bytes.test.ts checks that every table the migrations create is listed
 * under exactly one store.
 */
import type pg from 'pg';
import type { StoredBytes } from '../stored-bytes.ts';
import { sqlNumber } from '../sql-values.ts';

export const TRACE_TABLES = [
  'spans',
  'trace_skills',
  'trace_agents',
  'metric_points',
  'skill_spans',
  'sealed',
  'skill_rollup',
  'skill_special',
  'tool_call_pairs',
  'evaluations',
  'agent_names',
  'traces_schema_migrations',
] as const;

export const REGISTRY_TABLES = [
  'organizations',
  'users',
  'workspaces',
  'memberships',
  'projects',
  'artifacts',
  'relationships',
  'identities',
  'profile_images',
  'registry_generation',
  'repos',
  'ready_documents',
  'mcp_servers',
  'insights',
  'webhook_subscriptions',
  'webhook_deliveries',
  'webhook_subscription_health',
  'detection_cursors',
  'detection_pages',
  'detection_settings',
  'leases',
  'registry_schema_migrations',
] as const;

/**
 * A partitioned table is the sum of its partition tree; pg_partition_tree has no rows for a plain
 * table, which is its own size. Tables that do not exist (yet) in the store's schema are left out.
 */
const TABLE_BYTES = `
SELECT t.name,
  COALESCE((SELECT sum(pg_total_relation_size(p.relid)) FROM pg_partition_tree(t.oid) AS p),
           pg_total_relation_size(t.oid))::bigint AS bytes
FROM (SELECT name, to_regclass(name) AS oid FROM unnest($1::text[]) AS name) AS t
WHERE t.oid IS NOT NULL`;

export async function tableBytes(pool: pg.Pool, tables: readonly string[]): Promise<StoredBytes> {
  const { rows } = await pool.query<{ name: string; bytes: string }>(TABLE_BYTES, [tables]);
  return Object.fromEntries(rows.map((r) => [r.name, sqlNumber(r.bytes)]));
}
