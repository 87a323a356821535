/**
 * The MCP server part of the PostgreSQL registry engine (mcp-server-port.ts), over the
 * `mcp_servers` table of registry migration 005. A publish runs in one transaction that holds the
 * imports' lock shared (an import, which holds it exclusively, is never interleaved) and a lock of
 * its organization (publishes of one organization take turns), so its checks and its `is_latest`
 * refresh see every committed version; it bumps the registry generation, as an import does.
 */
import type pg from 'pg';
import type { McpServerVersion } from '../../domain/types.ts';
import type { McpServerQuery, McpServerStore, NewMcpServerVersion, ReadyMcpServerVersion } from '../mcp-server-port.ts';
import {
  checkPublish,
  latestVersion,
  mcpListConditions,
  MCP_SERVER_COLUMNS,
  nameAndVersion,
  READY_MCP_SERVER_COLUMNS,
  storedInstant,
  toMcpServerVersion,
  toReadyMcpServerVersion,
  type Neighbour,
  type VersionOrder,
} from '../mcp-server-rows.ts';
import type { Row } from '../sql-rows.ts';
import { IMPORT_LOCK } from './import-lock.ts';

/** The first key of the two-key advisory lock a publish takes on its organization (the second: the org id's hash). */
const PUBLISH_LOCK = 7310;

type Query = (sql: string, params?: unknown[]) => Promise<Row[]>;

/** The versions sharing an organization with a name or an id (each half searches its unique index; a row may come twice). */
const NEIGHBOURS = `SELECT id, name, version, workspace_id FROM mcp_servers WHERE org_id = $1 AND name = $2
  UNION ALL SELECT id, name, version, workspace_id FROM mcp_servers WHERE org_id = $1 AND id = $3`;

/**
 * Makes the latest version of each (organization, name) the only one marked latest (two
 * statements, whatever the number of names). A version whose mark changes was updated at `at`
 * (if later), unless this transaction wrote it: its times are those of that write.
 */
export async function refreshLatest(
  c: pg.ClientBase,
  names: readonly { org_id: string; name: string }[],
  at: string,
): Promise<void> {
  const orgs = names.map((n) => n.org_id);
  const { rows } = await c.query<VersionOrder & { org_id: string; name: string }>(
    `SELECT m.org_id, m.name, m.version, m.status, m.published_at FROM mcp_servers m
     JOIN unnest($1::text[], $2::text[]) AS n(org_id, name) ON m.org_id = n.org_id AND m.name = n.name COLLATE "C"`,
    [orgs, names.map((n) => n.name)],
  );
  const versions = new Map<string, VersionOrder[]>(names.map((n) => [JSON.stringify([n.org_id, n.name]), []]));
  for (const r of rows) versions.get(JSON.stringify([r.org_id, r.name]))?.push(r);
  await c.query(
    `UPDATE mcp_servers m SET is_latest = NOT m.is_latest, updated_at =
       CASE WHEN m.xmin = pg_current_xact_id()::xid THEN m.updated_at ELSE GREATEST(m.updated_at, $4) END
     FROM unnest($1::text[], $2::text[], $3::text[]) AS l(org_id, name, latest)
     WHERE m.org_id = l.org_id AND m.name = l.name COLLATE "C"
       AND m.is_latest <> (m.version IS NOT DISTINCT FROM l.latest COLLATE "C")`,
    [orgs, names.map((n) => n.name), [...versions.values()].map(latestVersion), at],
  );
}

export class PostgresMcpServers implements McpServerStore {
  /** `all` runs a statement on the pool (with the store's error mapping); `transaction` runs work in one. */
  private readonly all: Query;
  private readonly transaction: <T>(work: (c: pg.PoolClient) => Promise<T>) => Promise<T>;

  constructor(all: Query, transaction: <T>(work: (c: pg.PoolClient) => Promise<T>) => Promise<T>) {
    this.all = all;
    this.transaction = transaction;
  }

  async listMcpServerVersions(query: McpServerQuery): Promise<McpServerVersion[]> {
    return (await this.list(MCP_SERVER_COLUMNS, query)).map(toMcpServerVersion);
  }

  async listReadyMcpServerVersions(query: McpServerQuery): Promise<ReadyMcpServerVersion[]> {
    return (await this.list(READY_MCP_SERVER_COLUMNS, query)).map(toReadyMcpServerVersion);
  }

  private async list(columns: string, query: McpServerQuery): Promise<Row[]> {
    if (query.workspaceIds.length === 0 || query.limit <= 0) return [];
    const { where, params } = mcpListConditions(query, (i) => `$${String(i)}`, 2);
    return this.all(
      `SELECT ${columns} FROM mcp_servers WHERE workspace_id = ANY($1::text[])${where}
       ORDER BY name, version LIMIT $${String(params.length + 2)}`,
      [query.workspaceIds, ...params, query.limit],
    );
  }

  async getMcpServerVersionsByName(workspaceIds: readonly string[], name: string): Promise<McpServerVersion[]> {
    if (workspaceIds.length === 0) return [];
    const rows = await this.all(
      `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE name = $1 AND workspace_id = ANY($2::text[])
       ORDER BY version, org_id COLLATE "C"`,
      [name, workspaceIds],
    );
    return rows.map(toMcpServerVersion);
  }

  async getMcpServers(orgId: string, ids: readonly string[]): Promise<McpServerVersion[]> {
    if (ids.length === 0) return [];
    const rows = await this.all(
      `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE org_id = $1 AND is_latest AND id = ANY($2::text[]) ORDER BY id`,
      [orgId, ids],
    );
    return rows.map(toMcpServerVersion);
  }

  async getMcpServerHistory(orgId: string, ids: readonly string[]): Promise<McpServerVersion[]> {
    if (ids.length === 0) return [];
    const rows = await this.all(
      `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE org_id = $1 AND id = ANY($2::text[])
       ORDER BY id, published_at COLLATE "C", version`,
      [orgId, ids],
    );
    return rows.map(toMcpServerVersion);
  }

  async publishMcpServer(v: NewMcpServerVersion): Promise<McpServerVersion> {
    const { name, version } = nameAndVersion(v.server);
    const at = storedInstant(v.published_at);
    return this.transaction(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock_shared($1), pg_advisory_xact_lock($2, hashtext($3))', [
        IMPORT_LOCK,
        PUBLISH_LOCK,
        v.org_id,
      ]);
      const ws = await c.query<{ org_id: string }>('SELECT org_id FROM workspaces WHERE id = $1', [v.workspace_id]);
      if (ws.rows[0]?.org_id !== v.org_id) throw new Error(`the workspace ${v.workspace_id} is not one of ${v.org_id}`);
      const stored = await c.query<Neighbour>(NEIGHBOURS, [v.org_id, name, v.id]);
      checkPublish(v, name, version, stored.rows);
      await c.query(
        `INSERT INTO mcp_servers (${MCP_SERVER_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, FALSE, $8, $8, $8, $9, $9)`,
        [v.org_id, v.id, version, name, v.workspace_id, JSON.stringify(v.server), v.status, at, v.created_by],
      );
      await refreshLatest(c, [{ org_id: v.org_id, name }], at);
      await c.query('UPDATE registry_generation SET n = n + 1 WHERE id = 1');
      const { rows } = await c.query<Row>(
        `SELECT ${MCP_SERVER_COLUMNS} FROM mcp_servers WHERE org_id = $1 AND id = $2 AND version = $3`,
        [v.org_id, v.id, version],
      );
      return toMcpServerVersion(rows[0] as Row);
    });
  }
}
